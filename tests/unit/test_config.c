/* DEPS: src/config/config.c src/config/keytypes.c src/export/otlp_headers.c src/lib/log.c src/memory/memtarget.c src/lib/json.c src/lib/buf.c */
// SPDX-License-Identifier: GPL-2.0-only
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "config/config.h"
#include "testlib.h"

/* Failure messages quote captured stderr; testlib cutting them at 512 bytes is fine. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#ifndef AUTOPROF_VERSION
#define AUTOPROF_VERSION "0.0.0"
#endif
#ifndef AUTOPROF_COMMIT
#define AUTOPROF_COMMIT "unknown"
#endif

#define MiB (1024ULL * 1024)
#define GiB (1024ULL * MiB)
#define SEC 1000000000ULL

/* What the last load() printed. */
static char err_text[8192];
static char out_text[16384];
static char yaml_path[64];

static void slurp(FILE *f, char *buf, size_t n)
{
	size_t got;

	rewind(f);
	got = fread(buf, 1, n - 1, f);
	buf[got] = '\0';
}

/* Runs config__load on "autoprof" + the NULL-terminated args, capturing stdout and stderr. */
static enum config_result load_argv(struct config *cfg, int argc, char **argv)
{
	FILE *err = tmpfile(), *out = tmpfile();
	int saved_err, saved_out;
	enum config_result ret;

	fflush(stdout);
	fflush(stderr);
	saved_err = dup(2);
	saved_out = dup(1);
	dup2(fileno(err), 2);
	dup2(fileno(out), 1);
	optind = 0; /* getopt_long keeps global state between parses */
	ret = config__load(cfg, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_err, 2);
	dup2(saved_out, 1);
	close(saved_err);
	close(saved_out);
	slurp(err, err_text, sizeof(err_text));
	slurp(out, out_text, sizeof(out_text));
	fclose(err);
	fclose(out);
	return ret;
}

static enum config_result load(struct config *cfg, ...)
{
	char *argv[32] = { "autoprof" };
	int argc = 1;
	va_list ap;

	va_start(ap, cfg);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return load_argv(cfg, argc, argv);
}

/* Writes text to a fresh file whose path is yaml_path. */
static void write_yaml(const char *text)
{
	int fd;

	if (yaml_path[0])
		unlink(yaml_path);
	snprintf(yaml_path, sizeof(yaml_path), "/tmp/test_config_XXXXXX");
	fd = mkstemp(yaml_path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror("test_config: writing a temp file");
		exit(1);
	}
	close(fd);
}

static char file_flag[128];

/* Loads text as the YAML file, with extra flags after --config.file. */
static enum config_result load_yaml(struct config *cfg, const char *text)
{
	write_yaml(text);
	snprintf(file_flag, sizeof(file_flag), "--config.file=%s", yaml_path);
	return load(cfg, file_flag, NULL);
}

/* The message config__load should print for a file error on line. */
static const char *file_err(int line, const char *key_reason)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "autoprof: %s:%d: %s\n", yaml_path, line, key_reason);
	return buf;
}

static void check_defaults(const struct config *c)
{
	if (strcmp(c->web_listen_address, ":9740"))
		FAILF("web_listen_address \"%s\"", c->web_listen_address);
	if (c->profile_frequency != 99)
		FAILF("profile_frequency %u", c->profile_frequency);
	if (c->profile_retention_ns != 300 * SEC)
		FAILF("profile_retention_ns %llu", (unsigned long long)c->profile_retention_ns);
	if (c->log_level != LOG_INFO)
		FAILF("log_level %d", c->log_level);
	if (c->store_memory_limit != 64 * MiB)
		FAILF("store_memory_limit %llu", (unsigned long long)c->store_memory_limit);
	if (c->symbolizer_cache_size != 64 * MiB)
		FAILF("symbolizer_cache_size %llu", (unsigned long long)c->symbolizer_cache_size);
	if (c->bpf_ringbuf_size != 0) /* auto */
		FAILF("bpf_ringbuf_size %llu", (unsigned long long)c->bpf_ringbuf_size);
	if (c->unwind_mode != CONFIG_UNWIND_TABLE)
		FAILF("unwind_mode %u", c->unwind_mode);
	if (c->unwind_memory_limit != 16 * MiB)
		FAILF("unwind_memory_limit %llu", (unsigned long long)c->unwind_memory_limit);
	if (!c->unwind_walk_cache)
		FAILF("unwind_walk_cache %u", c->unwind_walk_cache);
}

/* Every setting except config.file, which names where the values came from. */
static int same_settings(const struct config *a, const struct config *b)
{
	return !strcmp(a->web_listen_address, b->web_listen_address) &&
	       a->profile_frequency == b->profile_frequency &&
	       a->profile_retention_ns == b->profile_retention_ns && a->log_level == b->log_level &&
	       a->store_memory_limit == b->store_memory_limit &&
	       a->symbolizer_cache_size == b->symbolizer_cache_size &&
	       a->bpf_ringbuf_size == b->bpf_ringbuf_size && a->unwind_mode == b->unwind_mode &&
	       a->unwind_memory_limit == b->unwind_memory_limit;
}

/* The non-default values used by the nested, flat and flag tests. */
static void check_custom(const struct config *c)
{
	if (strcmp(c->web_listen_address, "127.0.0.1:8080"))
		FAILF("web_listen_address \"%s\"", c->web_listen_address);
	if (c->profile_frequency != 49)
		FAILF("profile_frequency %u", c->profile_frequency);
	if (c->profile_retention_ns != 5400 * SEC)
		FAILF("profile_retention_ns %llu", (unsigned long long)c->profile_retention_ns);
	if (c->log_level != LOG_DEBUG)
		FAILF("log_level %d", c->log_level);
	if (c->store_memory_limit != 2 * GiB)
		FAILF("store_memory_limit %llu", (unsigned long long)c->store_memory_limit);
	if (c->symbolizer_cache_size != 5000000)
		FAILF("symbolizer_cache_size %llu", (unsigned long long)c->symbolizer_cache_size);
	if (c->bpf_ringbuf_size != 256 * 1024)
		FAILF("bpf_ringbuf_size %llu", (unsigned long long)c->bpf_ringbuf_size);
}

TEST(defaults)
{
	struct config c;

	CHECK_EQ(load(&c, NULL), CONFIG_OK);
	CHECK_STR(err_text, "");
	CHECK_STR(c.config_file, "");
	check_defaults(&c);
}

TEST(yaml_nested)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, "web:\n"
			       "  listen-address: \"127.0.0.1:8080\"\n"
			       "profile:\n"
			       "  frequency: 49\n"
			       "  retention: 1h30m\n"
			       "log:\n"
			       "  level: debug\n"
			       "store:\n"
			       "  memory-limit: 2GiB\n"
			       "symbolizer:\n"
			       "  cache-size: 5MB\n"
			       "bpf:\n"
			       "  ringbuf-size: 256KiB\n"),
		 CONFIG_OK);
	CHECK_STR(err_text, "");
	CHECK_STR(c.config_file, yaml_path);
	check_custom(&c);
}

TEST(yaml_flat)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, "web.listen-address: 127.0.0.1:8080\n"
			       "profile.frequency: \"49\"\n"
			       "profile.retention: 90m\n"
			       "log.level: debug\n"
			       "store.memory-limit: 2 GiB\n"
			       "symbolizer.cache-size: 5000000B\n"
			       "bpf.ringbuf-size: 262144\n"),
		 CONFIG_OK);
	CHECK_STR(err_text, "");
	check_custom(&c);
}

TEST(yaml_flow_and_partial)
{
	struct config c;

	/* Flow style, a section left empty, and keys not given keep their defaults. */
	CHECK_EQ(load_yaml(&c, "---\nprofile: {frequency: 49}\nweb:\nlog: ~\n...\n"), CONFIG_OK);
	CHECK_STR(err_text, "");
	CHECK_EQ(c.profile_frequency, 49);
	c.profile_frequency = 99;
	check_defaults(&c);
}

TEST(yaml_empty)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, ""), CONFIG_OK);
	CHECK_STR(err_text, "");
	check_defaults(&c);
	CHECK_EQ(load_yaml(&c, "# nothing but a comment\n\n"), CONFIG_OK);
	CHECK_STR(err_text, "");
	check_defaults(&c);
}

TEST(flags_each_key)
{
	struct config c;

	CHECK_EQ(load(&c, "--web.listen-address=127.0.0.1:8080", "--profile.frequency", "49",
		      "--profile.retention=1h30m", "--log.level", "debug",
		      "--store.memory-limit=2GiB", "--symbolizer.cache-size", "5MB",
		      "--bpf.ringbuf-size=256KiB", NULL),
		 CONFIG_OK);
	CHECK_STR(err_text, "");
	check_custom(&c);
}

TEST(flags_override_yaml)
{
	struct config c;

	write_yaml("profile:\n  frequency: 10\n  retention: 1h\nlog:\n  level: warn\n");
	snprintf(file_flag, sizeof(file_flag), "--config.file=%s", yaml_path);
	/* The flag wins even when it comes before --config.file. */
	CHECK_EQ(load(&c, "--profile.frequency=20", file_flag, "--log.level", "error", NULL),
		 CONFIG_OK);
	CHECK_STR(err_text, "");
	CHECK_EQ(c.profile_frequency, 20);
	CHECK_EQ(c.profile_retention_ns, 3600 * SEC);
	CHECK_EQ(c.log_level, LOG_ERROR);
	/* The last of a repeated flag wins. */
	CHECK_EQ(load(&c, "--profile.frequency=20", "--profile.frequency=30", NULL), CONFIG_OK);
	CHECK_EQ(c.profile_frequency, 30);
}

TEST(flag_errors_after_file)
{
	struct config c;

	write_yaml("profile:\n  frequency: 10\n");
	snprintf(file_flag, sizeof(file_flag), "--config.file=%s", yaml_path);
	CHECK_EQ(load(&c, file_flag, "--profile.frequency=0", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --profile.frequency: 0 is out of range 1..1000\n");
}

static const struct {
	const char *in;
	uint64_t ns;
} good_durations[] = {
	{ "10s", 10 * SEC },
	{ "30s", 30 * SEC },
	{ "5m", 300 * SEC },
	{ "1h", 3600 * SEC },
	{ "1h30m", 5400 * SEC },
	{ "90m", 5400 * SEC },
	{ "10s500ms", 10 * SEC + 500000000 },
	{ "10500ms", 10 * SEC + 500000000 },
	{ "1h0m30s", 3630 * SEC },
	{ "24h", 86400 * SEC },
	{ "1d", 86400 * SEC },
	{ "20000000us", 20 * SEC },
	{ "1m1ns", 60 * SEC + 1 },
};

TEST(duration_parse)
{
	char flag[64];
	struct config c;

	for (size_t i = 0; i < sizeof(good_durations) / sizeof(good_durations[0]); i++) {
		snprintf(flag, sizeof(flag), "--profile.retention=%s", good_durations[i].in);
		if (load(&c, flag, NULL) != CONFIG_OK ||
		    c.profile_retention_ns != good_durations[i].ns) {
			FAILF("%s: %s", flag, err_text);
			return;
		}
	}
}

/* The reason for a value that does not parse is the same for every value of a kind. */
#define BAD_DURATION(v)                                                                          \
	{ "profile.retention", v, "invalid duration \"" v "\" (want e.g. 500ms, 30s, 5m, 1h30m)" }
#define BAD_SIZE(v)                                                                              \
	{ "store.memory-limit", v,                                                               \
	  "invalid size \"" v "\" (want e.g. 65536, 512KiB, 64MiB, 1GiB; KB/MB/GB are 1000-based)" }
#define BAD_NUMBER(v)                                                                            \
	{ "profile.frequency", v, "invalid number \"" v "\" (want a non-negative integer)" }
#define BAD_LEVEL(v)                                                                             \
	{ "log.level", v, "invalid log level \"" v "\" (want error, warn, info or debug)" }
#define BAD_FORM(v)                                                                              \
	{ "web.listen-address", v,                                                               \
	  "invalid listen address \"" v "\": want [host]:port, e.g. \":9740\"" }
#define BAD_HOST(v)                                                                              \
	{ "web.listen-address", v,                                                               \
	  "invalid listen address \"" v "\": host must be empty, an IPv4 address or [IPv6]" }
#define BAD_PORT(v)                                                                              \
	{ "web.listen-address", v,                                                               \
	  "invalid listen address \"" v "\": port must be a number 0..65535" }

static const struct {
	const char *key, *in, *reason;
} bad_values[] = {
	BAD_DURATION(""),
	BAD_DURATION("60"),
	BAD_DURATION("5x"),
	BAD_DURATION("m"),
	BAD_DURATION("1.5h"),
	BAD_DURATION("-5m"),
	BAD_DURATION("30m1h"),
	BAD_DURATION("5m5m"),
	BAD_DURATION("5 m"),
	BAD_DURATION("1H"),
	{ "profile.retention", "99999999999h", "99999999999h is too large" },
	{ "profile.retention", "5s", "5s is out of range 10s..24h" },
	{ "profile.retention", "500ms", "500ms is out of range 10s..24h" },
	{ "profile.retention", "24h1s", "24h1s is out of range 10s..24h" },
	BAD_SIZE(""),
	BAD_SIZE("MiB"),
	BAD_SIZE("1.5MiB"),
	BAD_SIZE("10XB"),
	BAD_SIZE("2mib"),
	BAD_SIZE("-1"),
	{ "store.memory-limit", "99999999999999999999", "99999999999999999999 is too large" },
	{ "store.memory-limit", "99999999999GiB", "99999999999GiB is too large" },
	{ "store.memory-limit", "512KiB", "512KiB is out of range 1MiB..64GiB" },
	{ "store.memory-limit", "65GiB", "65GiB is out of range 1MiB..64GiB" },
	{ "symbolizer.cache-size", "1000KB", "1000KB is out of range 1MiB..64GiB" },
	{ "bpf.ringbuf-size", "3MiB", "3MiB is not a power of two" },
	{ "bpf.ringbuf-size", "1000000", "1000000 is not a power of two" },
	{ "bpf.ringbuf-size", "1MB", "1MB is not a power of two" },
	{ "bpf.ringbuf-size", "32KiB", "32KiB is out of range 64KiB..1GiB" },
	{ "bpf.ringbuf-size", "2GiB", "2GiB is out of range 64KiB..1GiB" },
	{ "unwind.mode", "dwarf", "invalid unwind mode \"dwarf\" (want table or fp)" },
	{ "unwind.mode", "", "invalid unwind mode \"\" (want table or fp)" },
	{ "unwind.memory-limit", "32KiB", "32KiB is out of range 64KiB..4GiB" },
	{ "unwind.walk-cache", "maybe", "invalid boolean \"maybe\" (want true or false)" },
	{ "profile.frequency", "0", "0 is out of range 1..1000" },
	{ "profile.frequency", "1001", "1001 is out of range 1..1000" },
	{ "profile.frequency", "4294967296", "4294967296 is out of range 1..1000" },
	BAD_NUMBER("abc"),
	BAD_NUMBER("-1"),
	BAD_NUMBER("99Hz"),
	BAD_LEVEL("verbose"),
	BAD_LEVEL("INFO"),
	BAD_FORM("9740"),
	BAD_FORM(""),
	BAD_FORM("[::1]9740"),
	BAD_FORM("[::1"),
	BAD_HOST("localhost:9740"),
	BAD_HOST("1.2.3.4.5:80"),
	BAD_HOST("::1:80"),
	BAD_HOST("[]:80"),
	BAD_HOST("[fe80::1%eth0]:1"),
	BAD_HOST("[127.0.0.1]:80"),
	BAD_HOST("1.2.3.4:80:81"),
	BAD_PORT(":70000"),
	BAD_PORT("[::1]:65536"),
	BAD_PORT(":"),
	BAD_PORT(":http"),
};

/* Each bad value is rejected the same way as a flag and on a given line of the file. */
TEST(bad_values)
{
	char flag[256], yaml[256], want[1024];
	struct config c;

	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		const char *key = bad_values[i].key, *dot = strchr(key, '.');

		snprintf(flag, sizeof(flag), "--%s=%s", key, bad_values[i].in);
		snprintf(want, sizeof(want), "autoprof: --%s: %s\n", key, bad_values[i].reason);
		if (load(&c, flag, NULL) != CONFIG_INVALID || strcmp(err_text, want)) {
			FAILF("%s: got \"%s\", want \"%s\"", flag, err_text, want);
			return;
		}
		/* Quoted so that YAML hands the text over unchanged; the key is on line 5. */
		snprintf(yaml, sizeof(yaml), "# test\n#\n\n%.*s:\n  %s: \"%s\"\n",
			 (int)(dot - key), key, dot + 1, bad_values[i].in);
		if (load_yaml(&c, yaml) != CONFIG_INVALID) {
			FAILF("%s accepted in YAML", flag);
			return;
		}
		snprintf(want, sizeof(want), "%s: %s", key, bad_values[i].reason);
		if (strcmp(err_text, file_err(5, want))) {
			FAILF("YAML %s: got \"%s\", want \"%s\"", flag, err_text,
			      file_err(5, want));
			return;
		}
	}
}

TEST(good_listen_addresses)
{
	static const char *const good[] = {
		":9740", ":0", "127.0.0.1:80", "0.0.0.0:65535", "[::1]:9740", "[::]:0",
	};
	char flag[128];
	struct config c;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(flag, sizeof(flag), "--web.listen-address=%s", good[i]);
		if (load(&c, flag, NULL) != CONFIG_OK) {
			FAILF("%s: %s", flag, err_text);
			return;
		}
		CHECK_STR(c.web_listen_address, good[i]);
	}
}

TEST(good_sizes)
{
	static const struct {
		const char *in;
		uint64_t v;
	} good[] = {
		{ "1048576", MiB },     { "1MiB", MiB },	 { "1024KiB", MiB },
		{ "2GiB", 2 * GiB },    { "64GiB", 64 * GiB },	 { "5MB", 5000000 },
		{ "1GB", 1000000000 },  { "64 MiB", 64 * MiB }, { "2000000B", 2000000 },
	};
	char flag[128];
	struct config c;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(flag, sizeof(flag), "--store.memory-limit=%s", good[i].in);
		if (load(&c, flag, NULL) != CONFIG_OK || c.store_memory_limit != good[i].v) {
			FAILF("%s: %s", flag, err_text);
			return;
		}
	}
	CHECK_EQ(load(&c, "--bpf.ringbuf-size=64KiB", NULL), CONFIG_OK);
	CHECK_EQ(c.bpf_ringbuf_size, 65536);
	CHECK_EQ(load(&c, "--bpf.ringbuf-size=1GiB", NULL), CONFIG_OK);
	CHECK_EQ(c.bpf_ringbuf_size, GiB);
	/* auto is 0, and only the word says it: 0 itself is no size. */
	CHECK_EQ(load(&c, "--bpf.ringbuf-size=auto", NULL), CONFIG_OK);
	CHECK_EQ(c.bpf_ringbuf_size, 0);
	CHECK_EQ(load(&c, "--bpf.ringbuf-size=0", NULL), CONFIG_INVALID);
	CHECK_EQ(load(&c, "--bpf.ringbuf-size=32KiB", NULL), CONFIG_INVALID);
	CHECK_EQ(load(&c, "--bpf.ringbuf-size=Auto", NULL), CONFIG_INVALID);
	CHECK_EQ(load(&c, "--log.level=error", NULL), CONFIG_OK);
	CHECK_EQ(c.log_level, LOG_ERROR);
	CHECK_EQ(load(&c, "--profile.frequency=1000", NULL), CONFIG_OK);
	CHECK_EQ(c.profile_frequency, 1000);
}

TEST(yaml_unknown_key)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, "web:\n  listen-address: \":1\"\n  listen-adress: \":2\"\n"),
		 CONFIG_INVALID);
	CHECK_STR(err_text, file_err(3, "web.listen-adress: unknown key"));
	CHECK_EQ(load_yaml(&c, "\n\nprofiles:\n  frequency: 10\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(3, "profiles: unknown key"));
	CHECK_EQ(load_yaml(&c, "log.level: info\nlog.levels: info\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(2, "log.levels: unknown key"));
	/* A key that is a section of nothing is unknown whatever its value. */
	CHECK_EQ(load_yaml(&c, "extra: [1, 2]\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(1, "extra: unknown key"));
}

TEST(yaml_wrong_type)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, "profile:\n  frequency:\n    hz: 10\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(2, "profile.frequency: want a single value, got a mapping"));
	CHECK_EQ(load_yaml(&c, "profile:\n  frequency: [10, 20]\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(2, "profile.frequency: want a single value, got a sequence"));
	CHECK_EQ(load_yaml(&c, "log:\n  level:\n    - info\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(2, "log.level: want a single value, got a sequence"));
	CHECK_EQ(load_yaml(&c, "bpf: 1MiB\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(1, "bpf: is a section, want a mapping of its keys"));
	CHECK_EQ(load_yaml(&c, "log:\n  level:\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(2, "log.level: missing value"));
	CHECK_EQ(load_yaml(&c, "- web\n- log\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(1, "the top level must be a mapping of keys"));
	CHECK_EQ(load_yaml(&c, "x: &a 1\nlog:\n  level: *a\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(1, "x: unknown key"));
	CHECK_EQ(load_yaml(&c, "log:\n  level: &a info\nweb:\n  listen-address: *a\n"),
		 CONFIG_INVALID);
	CHECK_STR(err_text, file_err(4, "web.listen-address: aliases are not supported"));
}

TEST(yaml_out_of_bounds)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, "profile:\n  retention: 5m\n  frequency: 5000\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(3, "profile.frequency: 5000 is out of range 1..1000"));
	CHECK_EQ(load_yaml(&c, "store:\n\n  memory-limit: 100GiB\n"), CONFIG_INVALID);
	CHECK_STR(err_text,
		  file_err(3, "store.memory-limit: 100GiB is out of range 1MiB..64GiB"));
	CHECK_EQ(load_yaml(&c, "profile.retention: 1s\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(1, "profile.retention: 1s is out of range 10s..24h"));
}

TEST(yaml_bad_listen_address)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, "log:\n  level: warn\nweb:\n  listen-address: localhost:80\n"),
		 CONFIG_INVALID);
	CHECK_STR(err_text, file_err(4, "web.listen-address: invalid listen address "
					"\"localhost:80\": host must be empty, an IPv4 address "
					"or [IPv6]"));
}

TEST(yaml_duplicate_key)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, "profile.frequency: 10\nprofile:\n  frequency: 20\n"),
		 CONFIG_INVALID);
	CHECK_STR(err_text, file_err(3, "profile.frequency: duplicate key (first set on line 1)"));
}

TEST(yaml_flag_only_key)
{
	struct config c;

	CHECK_EQ(load_yaml(&c, "config:\n  file: other.yaml\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(2, "config.file: only valid as a flag (--config.file)"));
}

TEST(yaml_syntax_error)
{
	struct config c;

	/* A tab cannot indent YAML; libyaml stops on the line with the tab. */
	CHECK_EQ(load_yaml(&c, "web:\n  listen-address: \":9740\"\nprofile:\n\tfrequency: 99\n"),
		 CONFIG_INVALID);
	CHECK_STR(err_text, file_err(4, "syntax error: found character that cannot start any "
					"token while scanning for the next token (line 4)"));
	CHECK_EQ(load_yaml(&c, "log:\n  level: info: x\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(2, "syntax error: mapping values are not allowed in this "
					"context"));
	CHECK_EQ(load_yaml(&c, "web:\n  listen-address: \":1\"\n  - x\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(3, "syntax error: did not find expected key while parsing a "
					"block mapping (line 2)"));
	CHECK_EQ(load_yaml(&c, "log: {level: info\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(2, "syntax error: did not find expected ',' or '}' while "
					"parsing a flow mapping (line 1)"));
	CHECK_EQ(load_yaml(&c, "log:\n  level: info\n---\nlog:\n  level: warn\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(3, "only one YAML document is allowed"));
	/* Invalid UTF-8 is a reader error, reported by byte offset; the line is still right. */
	CHECK_EQ(load_yaml(&c, "log:\n  level: info\nweb: \"\xff\"\n"), CONFIG_INVALID);
	CHECK_STR(err_text, file_err(3, "syntax error: invalid leading UTF-8 octet"));
}

TEST(missing_file)
{
	struct config c;

	CHECK_EQ(load(&c, "--config.file=/nonexistent/autoprof.yaml", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --config.file: cannot read \"/nonexistent/autoprof.yaml\": "
			    "No such file or directory\n");
	CHECK_EQ(load(&c, "--config.file", "/tmp", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --config.file: cannot read \"/tmp\": Is a directory\n");
	/* --help needs no file. */
	CHECK_EQ(load(&c, "--config.file=/nonexistent/autoprof.yaml", "--help", NULL),
		 CONFIG_EXIT_OK);
}

TEST(flag_errors)
{
	struct config c;

	CHECK_EQ(load(&c, "--bogus=1", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --bogus: unknown flag\n");
	CHECK_EQ(load(&c, "--bogus", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --bogus: unknown flag\n");
	/* getopt_long takes unique prefixes; a typo must not set a key. */
	CHECK_EQ(load(&c, "--profile.freq=5", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --profile.freq: unknown flag\n");
	CHECK_EQ(load(&c, "--profile", "5", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --profile: unknown flag\n");
	CHECK_EQ(load(&c, "-x", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: -x: unknown flag\n");
	CHECK_EQ(load(&c, "--profile.frequency", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --profile.frequency: missing value\n");
	CHECK_EQ(load(&c, "--help=yes", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --help: takes no value\n");
	CHECK_EQ(load(&c, "--log.level=debug", "extra", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: extra: unexpected argument (flags are --KEY=VALUE)\n");
	CHECK_EQ(load(&c, "--log.level=loud", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --log.level: invalid log level \"loud\" "
			    "(want error, warn, info or debug)\n");
	CHECK_STR(out_text, "");
}

TEST(offcpu_keys)
{
	static const struct {
		const char *in;
		uint32_t ppm;
	} ratios[] = { { "1", 1000000 }, { "0", 0 }, { "0.5", 500000 }, { ".25", 250000 },
		       { "0.000001", 1 }, { "1.0", 1000000 } };
	char why[256];
	struct config c;
	uint64_t v;

	CHECK_EQ(load(&c, NULL), CONFIG_OK);
	CHECK_EQ(c.offcpu_enabled, 0u);
	CHECK_EQ(c.offcpu_min_block_ns, 50000ull);
	CHECK_EQ(c.offcpu_sample_ppm, 1000000u);
	for (size_t i = 0; i < sizeof(ratios) / sizeof(ratios[0]); i++) {
		char flag[64];

		snprintf(flag, sizeof(flag), "--offcpu.sample-probability=%s", ratios[i].in);
		CHECK_EQ(load(&c, flag, "--offcpu.enabled=true", "--offcpu.min-block=1ms", NULL),
			 CONFIG_OK);
		CHECK_EQ(c.offcpu_sample_ppm, ratios[i].ppm);
		CHECK_EQ(c.offcpu_enabled, 1u);
		CHECK_EQ(c.offcpu_min_block_ns, 1000000ull);
	}
	CHECK_EQ(load(&c, "--offcpu.sample-probability=1.5", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --offcpu.sample-probability: 1.5 is out of range 0..1\n");
	CHECK_EQ(load(&c, "--offcpu.sample-probability=2", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --offcpu.sample-probability: 2 is out of range 0..1\n");
	CHECK_EQ(load(&c, "--offcpu.sample-probability=0.0000001", NULL), CONFIG_INVALID);
	CHECK_STR(err_text, "autoprof: --offcpu.sample-probability: invalid ratio \"0.0000001\" "
			    "(want a number from 0 to 1, e.g. 0.25)\n");
	CHECK_EQ(load(&c, "--offcpu.sample-probability=-0.5", NULL), CONFIG_INVALID);
	CHECK_EQ(load(&c, "--offcpu.min-block=2h", NULL), CONFIG_INVALID);

	/* The same parsing for run-time changes. */
	CHECK_EQ(config__parse_key("offcpu.min-block", "100us", &v, why, sizeof(why)), 0);
	CHECK_EQ(v, 100000ull);
	CHECK_EQ(config__parse_key("offcpu.sample-probability", "0.5", &v, why, sizeof(why)), 0);
	CHECK_EQ(v, 500000ull);
	CHECK_EQ(config__parse_key("offcpu.enabled", "off", &v, why, sizeof(why)), 0);
	CHECK_EQ(v, 0ull);
	CHECK_EQ(config__parse_key("offcpu.min-block", "soon", &v, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "invalid duration \"soon\" (want e.g. 500ms, 30s, 5m, 1h30m)");
	CHECK_EQ(config__parse_key("offcpu.sample-probability", "3", &v, why, sizeof(why)),
		 -EINVAL);
	CHECK_EQ(config__parse_key("web.listen-address", ":1", &v, why, sizeof(why)), -EINVAL);
}

TEST(help)
{
	static const char *const want[] = {
		"Usage: autoprof [FLAGS]",
		"-h, --help",
		"--version",
		"--web.listen-address=<string>",
		"(default: \":9740\")",
		"--config.file=<path>",
		"--profile.frequency=<uint>",
		"(default: 99, range: 1..1000)",
		"--profile.retention=<duration>",
		"(default: 5m, range: 10s..24h)",
		"--log.level=<level>",
		"(default: info)",
		"--store.memory-limit=<bytes>",
		"(default: 64MiB, range: 1MiB..64GiB)",
		"--symbolizer.cache-size=<bytes>",
		"--bpf.ringbuf-size=<bytes|auto>",
		"(default: auto, range: 64KiB..1GiB)",
	};
	struct config c;

	CHECK_EQ(load(&c, "--help", NULL), CONFIG_EXIT_OK);
	CHECK_STR(err_text, "");
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(out_text, want[i])) {
			FAILF("--help lacks \"%s\":\n%s", want[i], out_text);
			return;
		}
	}
	CHECK_EQ(load(&c, "-h", NULL), CONFIG_EXIT_OK);
	CHECK(strstr(out_text, "Usage: autoprof"));
}

TEST(version)
{
	struct config c;

	CHECK_EQ(load(&c, "--version", NULL), CONFIG_EXIT_OK);
	CHECK_STR(out_text, "autoprof version " AUTOPROF_VERSION " (commit " AUTOPROF_COMMIT ")\n");
	CHECK_STR(err_text, "");
}

/* Finds config/autoprof.yaml from the repo root (make runs tests there) or from this file. */
static const char *repo_config(void)
{
	static char path[4096];
	const char *slash;

	if (!access("config/autoprof.yaml", R_OK))
		return "config/autoprof.yaml";
	slash = strstr(__FILE__, "tests/unit/");
	snprintf(path, sizeof(path), "%.*sconfig/autoprof.yaml",
		 slash ? (int)(slash - __FILE__) : 0, __FILE__);
	return path;
}

TEST(repo_config_is_defaults)
{
	char flag[4200], line[256], *text;
	struct config c;
	FILE *f;
	long len;

	snprintf(flag, sizeof(flag), "--config.file=%s", repo_config());
	CHECK_EQ(load(&c, flag, NULL), CONFIG_OK);
	CHECK_STR(err_text, "");
	check_defaults(&c);
	if (test_cur_failed)
		return;

	/* It must document every key: each "  name:" that config__print_yaml writes. */
	f = fopen(repo_config(), "r");
	CHECK(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, len + 1);
	CHECK(text && fread(text, 1, len, f) == (size_t)len);
	fclose(f);
	f = tmpfile();
	config__print_yaml(&c, f);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (line[0] == '#' || !colon)
			continue;
		colon[1] = '\0';
		if (!strstr(text, line)) {
			FAILF("%s lacks \"%s\"", repo_config(), line);
			break;
		}
	}
	fclose(f);
	free(text);
}

TEST(print_yaml_round_trip)
{
	char buf[4096];
	struct config a, b;
	FILE *f;

	CHECK_EQ(load(&a, "--web.listen-address=[::1]:8080", "--profile.frequency=7",
		      "--profile.retention=1h2m3s4ms", "--log.level=warn",
		      "--store.memory-limit=1536KiB", "--symbolizer.cache-size=1000000000",
		      "--bpf.ringbuf-size=128KiB", NULL),
		 CONFIG_OK);
	f = tmpfile();
	config__print_yaml(&a, f);
	slurp(f, buf, sizeof(buf));
	fclose(f);
	CHECK(strstr(buf, "web:\n  listen-address: \"[::1]:8080\"\n"));
	CHECK(strstr(buf, "  retention: 1h2m3s4ms\n"));
	CHECK(strstr(buf, "  memory-limit: 1536KiB\n"));
	CHECK(strstr(buf, "  cache-size: 1000000000B\n"));
	CHECK(strstr(buf, "  ringbuf-size: 128KiB\n"));
	CHECK(strstr(buf, "  level: warn\n"));
	/* The flag-only config.file is left out; web.config.file is a key like the others. */
	CHECK(!strstr(buf, "config.file=") && !strstr(buf, "\nconfig"));
	CHECK_EQ(load_yaml(&b, buf), CONFIG_OK);
	CHECK_STR(err_text, "");
	CHECK(same_settings(&a, &b));

	/* Defaults round-trip too, and a config file shows up only as a comment. */
	CHECK_EQ(load_yaml(&a, ""), CONFIG_OK);
	f = tmpfile();
	config__print_yaml(&a, f);
	slurp(f, buf, sizeof(buf));
	fclose(f);
	CHECK(strstr(buf, "# --config.file=\"/tmp/test_config_"));
	CHECK(strstr(buf, "  retention: 5m\n"));
	CHECK_EQ(load_yaml(&b, buf), CONFIG_OK);
	CHECK_STR(err_text, "");
	CHECK(same_settings(&a, &b));
	check_defaults(&b);
}

/* String settings print whole, however long (they were cut at 511 bytes). */
TEST(print_yaml_long_strings)
{
	char probes[64 * 30 + 32] = "--probes.attach=", targets[64 * 16 + 32] = "--memory.targets=";
	static char buf[16384];
	struct config a, b;
	FILE *f;

	for (int i = 0; i < 60; i++)
		snprintf(probes + strlen(probes), sizeof(probes) - strlen(probes),
			 "%s/usr/bin/server:handler_%02d", i ? "," : "", i);
	/* 60: memory.targets holds at most 64. */
	for (int i = 0; i < 60; i++)
		snprintf(targets + strlen(targets), sizeof(targets) - strlen(targets),
			 "%sapplication-%03d*", i ? "," : "", i);
	CHECK_EQ(load(&a, probes, targets, NULL), CONFIG_OK);
	CHECK(strlen(a.probes) > 1500 && strlen(a.memory_targets) > 900);
	f = tmpfile();
	config__print_yaml(&a, f);
	slurp(f, buf, sizeof(buf));
	fclose(f);
	CHECK_EQ(load_yaml(&b, buf), CONFIG_OK);
	CHECK_STR(b.probes, a.probes);
	CHECK_STR(b.memory_targets, a.memory_targets);
}

/* Characters YAML reads as line breaks or refuses raw print escaped, and load back the same. */
TEST(print_yaml_escapes)
{
	static char buf[16384];
	struct config a, b;
	FILE *f;

	CHECK_EQ(load_yaml(&a, "memory:\n  targets: \"a\\Nb\\Lc\\Pd\\x80e\\tf\\x7fg\\u00e9\\\\*\"\n"),
		 CONFIG_OK);
	CHECK_STR(a.memory_targets, "a\xc2\x85" "b\xe2\x80\xa8" "c\xe2\x80\xa9" "d\xc2\x80" "e\tf\x7fg\xc3\xa9\\*");
	f = tmpfile();
	config__print_yaml(&a, f);
	slurp(f, buf, sizeof(buf));
	fclose(f);
	CHECK(strstr(buf, "  targets: \"a\\x85b\\u2028c\\u2029d\\x80e\\x09f\\x7fg\xc3\xa9\\\\*\"\n"));
	CHECK_EQ(load_yaml(&b, buf), CONFIG_OK);
	CHECK_STR(b.memory_targets, a.memory_targets);
}

int main(void)
{
	RUN(defaults);
	RUN(yaml_nested);
	RUN(yaml_flat);
	RUN(yaml_flow_and_partial);
	RUN(yaml_empty);
	RUN(flags_each_key);
	RUN(flags_override_yaml);
	RUN(flag_errors_after_file);
	RUN(duration_parse);
	RUN(bad_values);
	RUN(good_listen_addresses);
	RUN(good_sizes);
	RUN(yaml_unknown_key);
	RUN(yaml_wrong_type);
	RUN(yaml_out_of_bounds);
	RUN(yaml_bad_listen_address);
	RUN(yaml_duplicate_key);
	RUN(yaml_flag_only_key);
	RUN(yaml_syntax_error);
	RUN(missing_file);
	RUN(flag_errors);
	RUN(help);
	RUN(version);
	RUN(offcpu_keys);
	RUN(repo_config_is_defaults);
	RUN(print_yaml_round_trip);
	RUN(print_yaml_long_strings);
	RUN(print_yaml_escapes);
	if (yaml_path[0])
		unlink(yaml_path);
	return test_summary();
}
