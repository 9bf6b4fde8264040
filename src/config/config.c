// SPDX-License-Identifier: GPL-2.0-only
/*
 * Configuration: one table of keys drives the flags, the YAML file, the defaults, validation,
 * --help and the printed YAML, so adding a setting is adding one row.
 *
 * User-facing errors are printed with fprintf(stderr), not pr_err(): they have a fixed shape
 * ("autoprof: FILE:LINE: KEY: reason", "autoprof: --KEY: reason") that scripts and tests match,
 * and they must appear whatever log.level ends up being.
 */
#define pr_fmt(fmt) "config: " fmt

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "config/config.h"
#include "config/config_priv.h"

#ifndef AUTOPROF_VERSION
#define AUTOPROF_VERSION "0.0.0"
#endif
#ifndef AUTOPROF_COMMIT
#define AUTOPROF_COMMIT "unknown"
#endif

/* A config file is a handful of lines; the cap keeps --config.file=/dev/zero from hanging. */
#define CONFIG_FILE_MAX (1024 * 1024)
#define WHY_MAX		512
#define PATH_MAX_KEY	128

/* ---- the table ------------------------------------------------------------------------------ */

#define FIELD(f) .off = offsetof(struct config, f), .size = sizeof(((struct config *)0)->f)

/*
 * Keys of one section must be adjacent: config__print_yaml opens a section when the prefix
 * changes. Defaults are text and go through the same parser as user input.
 */
static const struct key keys[] = {
	{
		.name = "config.file",
		.type = &config_type_path,
		.def = "",
		FIELD(config_file),
		.flags = KEY_FLAG_ONLY | KEY_EARLY,
		.help = "YAML configuration file; flags override its values. Flag only.",
	},
	{
		.name = "web.listen-address",
		.type = &config_type_string,
		.def = ":9740",
		.check = listen_address__check,
		FIELD(web_listen_address),
		.help = "Address for /metrics and the HTTP API, [host]:port; host is empty (all "
			"interfaces), an IPv4 address or [IPv6].",
	},
	{
		.name = "web.config.file",
		.type = &config_type_path,
		.def = "",
		FIELD(web_config_file),
		.help = "Web configuration file in the Prometheus exporter-toolkit format "
			"(tls_server_config, basic_auth_users, http_server_config.headers); "
			"none: plain HTTP without authentication.",
	},
	{
		.name = "web.enable-admin-api",
		.type = &config_type_bool,
		.def = "false",
		FIELD(web_enable_admin_api),
		.help = "Allow the HTTP routes that change state (adding probes and memory targets, "
			"off-CPU settings); off, they answer 403. A bare --web.enable-admin-api "
			"means true.",
	},
	{
		.name = "profile.frequency",
		.type = &config_type_uint,
		.def = "99",
		.min = 1,
		.max = 1000,
		FIELD(profile_frequency),
		.help = "CPU sampling frequency in Hz, per CPU. 99 rather than 100 avoids "
			"sampling in lockstep with periodic timers.",
	},
	{
		.name = "profile.retention",
		.type = &config_type_duration,
		.def = "5m",
		.min = 10 * NSEC_PER_SEC,
		.max = 24 * 3600 * NSEC_PER_SEC,
		FIELD(profile_retention_ns),
		.help = "How long aggregated profiles are kept in memory (e.g. 30s, 5m, 1h30m).",
	},
	{
		.name = "log.level",
		.type = &config_type_level,
		.def = "info",
		.min = LOG_ERROR,
		.max = LOG_DEBUG,
		FIELD(log_level),
		.help = "Log verbosity: error, warn, info or debug.",
	},
	{
		.name = "store.memory-limit",
		.type = &config_type_bytes,
		.def = "64MiB",
		.min = MiB,
		.max = 64 * GiB,
		FIELD(store_memory_limit),
		.help = "Memory budget of the profile store; the oldest data is dropped beyond it.",
	},
	{
		.name = "storage.path",
		.type = &config_type_path,
		.def = "/var/lib/autoprof",
		FIELD(storage_path),
		.help = "Directory where profiles are kept on disk for storage.retention (made 0700 "
			"if missing; refused if a symlink or writable by others); empty: memory "
			"only.",
	},
	{
		.name = "storage.retention",
		.type = &config_type_duration,
		.def = "24h",
		.min = 60 * NSEC_PER_SEC,
		.max = 31 * 24 * 3600 * NSEC_PER_SEC,
		FIELD(storage_retention_ns),
		.help = "How long profiles are kept on disk.",
	},
	{
		.name = "storage.max-bytes",
		.type = &config_type_bytes,
		.def = "1GiB",
		.min = 256 * KiB,
		.max = 1024 * GiB,
		FIELD(storage_max_bytes),
		.help = "Disk budget of storage.path; the oldest profiles go first beyond it.",
	},
	{
		.name = "storage.flush-interval",
		.type = &config_type_duration,
		.def = "10s",
		.min = NSEC_PER_SEC,
		.max = 10 * NSEC_PER_SEC,
		FIELD(storage_flush_ns),
		.help = "How often new profiles are written to disk: at most this much is lost to "
			"a crash.",
	},
	{
		.name = "symbolizer.cache-size",
		.type = &config_type_bytes,
		.def = "64MiB",
		.min = MiB,
		.max = 64 * GiB,
		FIELD(symbolizer_cache_size),
		.help = "Memory budget of the symbol cache (ELF/DWARF symbol tables).",
	},
	{
		.name = "symbolizer.debuginfo-idle",
		.type = &config_type_duration,
		.def = "1m",
		.min = NSEC_PER_SEC,
		.max = 24 * 3600 * NSEC_PER_SEC,
		FIELD(symbolizer_debuginfo_idle_ns),
		.help = "A big file's DWARF reader (over 16 MiB of sections; smaller files are "
			"copied whole in the background, then let go) that read no new "
			"compilation unit for this long lets its inflated sections go; what it "
			"named keeps being named, a new unit opens it again.",
	},
	{
		.name = "bpf.ringbuf-size",
		.type = &config_type_bytes_auto,
		.def = "auto",
		.min = 64 * KiB,
		.max = GiB,
		.check = ringbuf_size__check,
		FIELD(bpf_ringbuf_size),
		.help = "Size of each BPF ring buffer that carries samples; a power of two and a "
			"multiple of the page size. auto: the on-CPU ring holds a second of "
			"samples at profile.frequency on every CPU (256KiB on 2 CPUs at 99 Hz), "
			"the off-CPU, memory and probe rings 1MiB when that profiler has work "
			"at start, 256KiB when it is off or has no target yet.",
	},
	{
		.name = "offcpu.enabled",
		.type = &config_type_bool,
		/* Off: about 0.45 us per context switch (docs/benchmarks.md), unbounded by any
		 * sampling rate; turned on at run time where waits are the question. */
		.def = "false",
		FIELD(offcpu_enabled),
		.help = "Record where threads block and for how long (/debug/pprof/offcpu). "
			"Changeable at run time: POST /debug/offcpu/config.",
	},
	{
		.name = "offcpu.min-block",
		.type = &config_type_duration,
		.def = "50us",
		.min = 0,
		.max = 3600 * NSEC_PER_SEC,
		FIELD(offcpu_min_block_ns),
		.help = "Shortest off-CPU span recorded; shorter waits cost one hash lookup each.",
	},
	{
		.name = "offcpu.sample-probability",
		.type = &config_type_ratio,
		.def = "1",
		.min = 0,
		.max = 1000000,
		FIELD(offcpu_sample_ppm),
		.help = "Fraction of off-CPU spans recorded, for busy hosts (values are not "
			"scaled back up).",
	},
	{
		.name = "otlp.endpoint",
		.type = &config_type_string,
		.def = "",
		.check = otlp_endpoint__check,
		FIELD(otlp_endpoint),
		.help = "OTLP/HTTP collector to push profiles to, e.g. http://localhost:4318 "
			"(POST {endpoint}/v1development/profiles); empty: no push.",
	},
	{
		.name = "otlp.interval",
		.type = &config_type_duration,
		.def = "15s",
		.min = NSEC_PER_SEC,
		.max = 3600 * NSEC_PER_SEC,
		FIELD(otlp_interval_ns),
		.help = "How often profiles of the last interval are pushed.",
	},
	{
		.name = "otlp.timeout",
		.type = &config_type_duration,
		.def = "10s",
		.min = NSEC_PER_SEC,
		.max = 300 * NSEC_PER_SEC,
		FIELD(otlp_timeout_ns),
		.help = "Time limit of one push request.",
	},
	{
		.name = "otlp.gzip",
		.type = &config_type_bool,
		.def = "true",
		FIELD(otlp_gzip),
		.help = "Compress requests with gzip.",
	},
	{
		.name = "otlp.headers",
		.type = &config_type_string,
		.def = "",
		.check = otlp_headers__check,
		FIELD(otlp_headers),
		.help = "Extra request headers, Name=value[,Name=value...] (e.g. an auth token).",
	},
	{
		.name = "otlp.queue-size",
		.type = &config_type_bytes,
		.def = "8MiB",
		.min = 64 * KiB,
		.max = GiB,
		FIELD(otlp_queue_size),
		.help = "Bound on pushes waiting for the collector; the oldest are dropped beyond it.",
	},
	{
		.name = "otlp.headers-file",
		.type = &config_type_path,
		.def = "",
		.check = otlp_headers_file__check,
		FIELD(otlp_headers_file),
		.help = "File of extra request headers, one \"Name: value\" a line, read at start: "
			"keeps tokens out of the command line. Added to otlp.headers.",
	},
	{
		.name = "otlp.ca-file",
		.type = &config_type_path,
		.def = "",
		.check = readable_file__check,
		FIELD(otlp_ca_file),
		.help = "PEM CA certificates that verify an https:// collector, instead of the "
			"system's.",
	},
	{
		.name = "otlp.cert-file",
		.type = &config_type_path,
		.def = "",
		.check = readable_file__check,
		FIELD(otlp_cert_file),
		.help = "PEM client certificate presented to an https:// collector (mutual TLS).",
	},
	{
		.name = "otlp.key-file",
		.type = &config_type_path,
		.def = "",
		.check = readable_file__check,
		FIELD(otlp_key_file),
		.help = "PEM private key of otlp.cert-file.",
	},
	{
		.name = "otlp.shutdown-timeout",
		.type = &config_type_duration,
		.def = "5s",
		.min = 0,
		.max = 300 * NSEC_PER_SEC,
		FIELD(otlp_shutdown_timeout_ns),
		.help = "On SIGTERM, how long the last push may take (queued batches and the "
			"seconds not yet pushed) before autoprof exits; 0: exit at once.",
	},
	{
		.name = "python.enabled",
		.type = &config_type_bool,
		.def = "true",
		FIELD(python_enabled),
		.help = "Name the frames of CPython 3.10-3.13 processes (function, file, line) in "
			"place of the interpreter's evaluation loop; their frame chains are walked in "
			"BPF at each sample.",
	},
	{
		.name = "lua.enabled",
		.type = &config_type_bool,
		.def = "true",
		FIELD(lua_enabled),
		.help = "Name the frames of PUC Lua 5.1, 5.3 and 5.4 and LuaJIT 2.1 processes "
			"(function, chunk, line) in place of the interpreter's own; the running "
			"state's calls are walked in BPF at each sample.",
	},
	{
		.name = "unwind.mode",
		.type = &config_type_unwind_mode,
		.def = "table",
		.min = CONFIG_UNWIND_FP,
		.max = CONFIG_UNWIND_TABLE,
		FIELD(unwind_mode),
		.help = "How user stacks are walked: table (.eh_frame unwind tables, frame pointers "
			"where a file has none) or fp (frame pointers only).",
	},
	{
		.name = "unwind.memory-limit",
		.type = &config_type_bytes,
		.def = "16MiB",
		.min = 64 * KiB,
		.max = 4 * GiB,
		FIELD(unwind_memory_limit),
		.help = "Memory for unwind tables (10 bytes per row with its page index; glibc and "
			"libstdc++ take about 600KiB); the least recently mapped files' tables are "
			"dropped beyond it "
			"(walks stop at those files, marked truncated: truncated_noroom).",
	},
	{
		.name = "unwind.walk-cache",
		.type = &config_type_bool,
		.def = "true",
		FIELD(unwind_walk_cache),
		.help = "Keep the rules of recently walked stacks in the on-CPU sampler (about "
			"50KiB per CPU), so that a stack seen again is walked from its own words "
			"instead of the tables; false: always the tables.",
	},
	{
		.name = "memory.targets",
		.type = &config_type_string,
		.def = "",
		.check = memory_targets__check,
		FIELD(memory_targets),
		.help = "Processes to memory-profile: globs on the executable name or cgroup:DIR "
			"(the processes in a cgroup directory and below), PATTERN[,PATTERN...], "
			"matched at exec and at start; more through POST /api/v1/targets/memory.",
	},
	{
		.name = "memory.sample-interval",
		.type = &config_type_bytes,
		.def = "512KiB",
		.min = 1,
		.max = GiB,
		FIELD(memory_sample_interval),
		.help = "Mean bytes allocated between sampled allocations, per thread (as Go's "
			"MemProfileRate); 1B samples every allocation.",
	},
	{
		.name = "memory.max-live",
		.type = &config_type_uint,
		.def = "65536",
		.min = 1024,
		.max = 16 * 1024 * 1024,
		FIELD(memory_max_live),
		.help = "Live sampled allocations held at most; samples beyond it are counted "
			"(autoprof_memory_dropped_total) and appear in allocs only.",
	},
	{
		.name = "gpu.enabled",
		.type = &config_type_bool,
		.def = "true",
		FIELD(gpu_enabled),
		.help = "GPU memory profiles (gpuheap, gpuallocs): probe the CUDA runtime "
			"(libcudart.so.*) and driver (libcuda.so.1) of every process that maps "
			"them.",
	},
	{
		.name = "gpu.max-live",
		.type = &config_type_uint,
		.def = "16384",
		.min = 1024,
		.max = 16 * 1024 * 1024,
		FIELD(gpu_max_live),
		.help = "Live GPU allocations held at most (each keeps its stack: up to 2KiB); "
			"more are counted (autoprof_gpu_dropped_total) and appear in gpuallocs "
			"only.",
	},
	{
		.name = "gpu.pytorch-sample-interval",
		.type = &config_type_bytes,
		.def = "512KiB",
		.min = 1,
		.max = GiB,
		FIELD(gpu_pytorch_sample_interval),
		.help = "PyTorch's tensors (its pytorch:malloc USDT probe): mean bytes between "
			"sampled ones, per thread, scaled back to estimates as heap samples are; "
			"1B records every tensor (each costs a stack walk, ~2us).",
	},
	{
		.name = "jvm.perf-map",
		.type = &config_type_bool,
		.def = "true",
		FIELD(jvm_perf_map),
		.help = "Name HotSpot JIT frames: ask JVMs (attach API, SIGQUIT to start its "
			"listener) for /tmp/perf-PID.map (jcmd Compiler.perfmap, JDK 17+) when "
			"their samples hit unnamed JIT code; removed when the JVM exits.",
	},
	{
		.name = "probes.attach",
		.type = &config_type_string,
		.def = "",
		.check = probes__check_list,
		FIELD(probes),
		.help = "Latency probes attached at start: /BINARY:FUNCTION or /BINARY:FILE:LINE, "
			"comma-separated; more through POST /api/v1/probes.",
	},
};

#define NR_KEYS ARRAY_SIZE(keys)

static const struct key *key__find(const char *name)
{
	for (size_t i = 0; i < NR_KEYS; i++) {
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	}
	return NULL;
}

int config__parse_key(const char *name, const char *s, uint64_t *v, char *why, size_t n)
{
	const struct key *k = key__find(name);
	struct key tmp;

	if (!k || !k->type->parse) {
		snprintf(why, n, "%s is not a numeric configuration key", name);
		return -EINVAL;
	}
	/* The key's own parser, bounds and checks, storing into a plain uint64_t. */
	tmp = *k;
	tmp.size = sizeof(*v);
	return tmp.type->set(&tmp, v, s, why, n);
}

/* True when name is a section of some key: "web" for "web.listen-address". */
static bool key__is_section(const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < NR_KEYS; i++) {
		if (!strncmp(keys[i].name, name, len) && keys[i].name[len] == '.')
			return true;
	}
	return false;
}

static int key__set(const struct key *k, struct config *cfg, const char *s, char *why, size_t n)
{
	return k->type->set(k, (char *)cfg + k->off, s, why, n);
}

static void key__get(const struct key *k, const struct config *cfg, char *out, size_t n)
{
	k->type->get(k, (const char *)cfg + k->off, out, n);
}

/* ---- errors --------------------------------------------------------------------------------- */

static void __attribute__((format(printf, 4, 5)))
file__error(const char *file, size_t line, const char *key, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "autoprof: %s:%zu: ", file, line);
	if (key)
		fprintf(stderr, "%s: ", key);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void __attribute__((format(printf, 2, 3)))
flag__error(const char *flag, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "autoprof: %s: ", flag);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- YAML ----------------------------------------------------------------------------------- */

struct yaml_ctx {
	yaml_parser_t parser;
	const char *file;
	const char *text;
	size_t len;
	struct config *cfg;
	size_t seen[NR_KEYS]; /* line where each key was set, 0 if not yet */
};

static size_t yaml__line(const yaml_mark_t *mark)
{
	return mark->line + 1;
}

static void yaml__syntax_error(struct yaml_ctx *c)
{
	const yaml_parser_t *p = &c->parser;
	size_t line = yaml__line(&p->problem_mark);

	/* Reader errors (bad encoding) carry a byte offset instead of a mark. */
	if (p->error == YAML_READER_ERROR) {
		line = 1;
		for (size_t i = 0; i < p->problem_offset && i < c->len; i++)
			line += c->text[i] == '\n';
	}
	if (p->context)
		file__error(c->file, line, NULL, "syntax error: %s %s (line %zu)",
			    p->problem ? p->problem : "invalid YAML", p->context,
			    yaml__line(&p->context_mark));
	else
		file__error(c->file, line, NULL, "syntax error: %s",
			    p->problem ? p->problem : "invalid YAML");
}

static int yaml__next(struct yaml_ctx *c, yaml_event_t *ev)
{
	if (yaml_parser_parse(&c->parser, ev))
		return 0;
	yaml__syntax_error(c);
	return -EINVAL;
}

static bool yaml__is_null(const yaml_event_t *ev)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	const char *v = (const char *)ev->data.scalar.value;

	if (ev->type != YAML_SCALAR_EVENT || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(nulls); i++) {
		if (!strcmp(v, nulls[i]))
			return true;
	}
	return false;
}

static const char *const yaml_kinds[] = {
	[YAML_SEQUENCE_START_EVENT] = "a sequence",
	[YAML_MAPPING_START_EVENT] = "a mapping",
	[YAML_ALIAS_EVENT] = "an alias",
};

static int yaml__mapping(struct yaml_ctx *c, const char *prefix);

/* Handles the value of path; ev is consumed. */
static int yaml__value(struct yaml_ctx *c, const char *path, size_t key_line, yaml_event_t *ev)
{
	const struct key *k = key__find(path);
	char why[WHY_MAX];
	int err = -EINVAL;

	if (ev->type == YAML_ALIAS_EVENT) {
		file__error(c->file, key_line, path, "aliases are not supported");
	} else if (!k && key__is_section(path)) {
		if (ev->type == YAML_MAPPING_START_EVENT)
			err = yaml__mapping(c, path);
		else if (yaml__is_null(ev))
			err = 0; /* "web:" with nothing under it */
		else
			file__error(c->file, key_line, path,
				    "is a section, want a mapping of its keys");
	} else if (!k) {
		file__error(c->file, key_line, path, "unknown key");
	} else if (k->flags & KEY_FLAG_ONLY) {
		file__error(c->file, key_line, path, "only valid as a flag (--%s)", k->name);
	} else if (ev->type != YAML_SCALAR_EVENT) {
		file__error(c->file, key_line, path, "want a single value, got %s",
			    yaml_kinds[ev->type]);
	} else if (yaml__is_null(ev)) {
		file__error(c->file, key_line, path, "missing value");
	} else if (c->seen[k - keys]) {
		file__error(c->file, key_line, path, "duplicate key (first set on line %zu)",
			    c->seen[k - keys]);
	} else if (key__set(k, c->cfg, (const char *)ev->data.scalar.value, why, sizeof(why))) {
		file__error(c->file, yaml__line(&ev->start_mark), path, "%s", why);
	} else {
		c->seen[k - keys] = key_line;
		err = 0;
	}
	yaml_event_delete(ev);
	return err;
}

static int yaml__mapping(struct yaml_ctx *c, const char *prefix)
{
	yaml_event_t key, val;
	char path[PATH_MAX_KEY];
	size_t line;

	for (;;) {
		if (yaml__next(c, &key))
			return -EINVAL;
		if (key.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&key);
			return 0;
		}
		line = yaml__line(&key.start_mark);
		if (key.type != YAML_SCALAR_EVENT) {
			yaml_event_delete(&key);
			file__error(c->file, line, *prefix ? prefix : NULL,
				    "keys must be plain names");
			return -EINVAL;
		}
		/* The flat form "web.listen-address:" joins to the same path as the nested one. */
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "",
			 (const char *)key.data.scalar.value);
		yaml_event_delete(&key);
		if (yaml__next(c, &val))
			return -EINVAL;
		if (yaml__value(c, path, line, &val))
			return -EINVAL;
	}
}

static int yaml__document(struct yaml_ctx *c)
{
	yaml_event_t ev;
	int err = 0;

	if (yaml__next(c, &ev))
		return -EINVAL;
	if (ev.type == YAML_MAPPING_START_EVENT)
		err = yaml__mapping(c, "");
	else if (!yaml__is_null(&ev)) {
		file__error(c->file, yaml__line(&ev.start_mark), NULL,
			    "the top level must be a mapping of keys");
		err = -EINVAL;
	}
	yaml_event_delete(&ev);
	if (err)
		return err;
	if (yaml__next(c, &ev)) /* DOCUMENT_END */
		return -EINVAL;
	yaml_event_delete(&ev);
	return 0;
}

static int yaml__stream(struct yaml_ctx *c)
{
	yaml_event_t ev;
	int docs = 0;

	for (;;) {
		if (yaml__next(c, &ev))
			return -EINVAL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			yaml_event_delete(&ev);
			return 0;
		case YAML_DOCUMENT_START_EVENT:
			if (docs++) {
				file__error(c->file, yaml__line(&ev.start_mark), NULL,
					    "only one YAML document is allowed");
				yaml_event_delete(&ev);
				return -EINVAL;
			}
			yaml_event_delete(&ev);
			if (yaml__document(c))
				return -EINVAL;
			break;
		default: /* STREAM_START */
			yaml_event_delete(&ev);
			break;
		}
	}
}

/* Reads the whole file so read errors get a proper errno and reader errors a line number. */
static int file__read(const char *path, char **text, size_t *len)
{
	size_t cap = 4096, used = 0, got;
	FILE *f = fopen(path, "rb");
	char *buf, *p;
	int err = 0;

	if (!f)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	for (;;) {
		got = fread(buf + used, 1, cap - used, f);
		used += got;
		if (got == 0) {
			if (ferror(f))
				err = errno ? -errno : -EIO;
			break;
		}
		if (used == cap) {
			if (cap >= CONFIG_FILE_MAX) {
				err = -EFBIG;
				break;
			}
			cap *= 2;
			p = realloc(buf, cap);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			buf = p;
		}
	}
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*text = buf;
	*len = used;
	return 0;
}

static enum config_result config__load_file(struct config *cfg, const char *path)
{
	struct yaml_ctx c = { .file = path, .cfg = cfg };
	char *text = NULL;
	size_t len = 0;
	int err;

	err = file__read(path, &text, &len);
	if (err) {
		flag__error("--config.file", "cannot read \"%s\": %s", path,
			    err == -EFBIG ? "larger than 1MiB" : strerror(-err));
		return CONFIG_INVALID;
	}
	c.text = text;
	c.len = len;
	if (!yaml_parser_initialize(&c.parser)) {
		free(text);
		flag__error("--config.file", "cannot parse \"%s\": out of memory", path);
		return CONFIG_INVALID;
	}
	yaml_parser_set_input_string(&c.parser, (const unsigned char *)text, len);
	err = yaml__stream(&c);
	yaml_parser_delete(&c.parser);
	free(text);
	if (err)
		return CONFIG_INVALID;
	pr_debug("loaded %s\n", path);
	return CONFIG_OK;
}

/* ---- flags ---------------------------------------------------------------------------------- */

enum {
	OPT_HELP = 'h',
	OPT_VERSION = 0x100,
	OPT_KEY = 0x200, /* OPT_KEY + index into keys[] */
};

/* Help lines are indented one tab; wrapping at 72 columns keeps them inside 80. */
static void text__wrap(const char *s, FILE *f)
{
	const int width = 72;
	int col = 0, len;

	while (*s) {
		s += strspn(s, " ");
		len = (int)strcspn(s, " ");
		if (!len)
			break;
		if (col && col + 1 + len > width) {
			fputc('\n', f);
			col = 0;
		}
		fprintf(f, "%s%.*s", col ? " " : "\t", len, s);
		col += len + !!col;
		s += len;
	}
	fputc('\n', f);
}

static void config__usage(FILE *f)
{
	char def[WHY_MAX], why[WHY_MAX], lo[32], hi[32];
	struct config cfg;

	memset(&cfg, 0, sizeof(cfg));
	fprintf(f, "Usage: autoprof [FLAGS]\n\n"
		   "A continuous eBPF profiler. Every flag --KEY is also the YAML key KEY in\n"
		   "the file named by --config.file (web.listen-address is\n"
		   "web: {listen-address: ...}); flags override the file, the file overrides\n"
		   "the defaults.\n\n"
		   "Flags:\n"
		   "  -h, --help\n\tShow this help and exit.\n"
		   "  --version\n\tShow the version and exit.\n");
	for (size_t i = 0; i < NR_KEYS; i++) {
		const struct key *k = &keys[i];
		const struct key_type *t = k->type;

		fprintf(f, "  --%s=<%s>\n", k->name, t->metavar);
		text__wrap(k->help, f);
		fprintf(f, "\t(default: ");
		/* Round-trip the default so --help shows it as config__print_yaml would. */
		if (key__set(k, &cfg, k->def, why, sizeof(why)))
			snprintf(def, sizeof(def), "%s", k->def);
		else
			key__get(k, &cfg, def, sizeof(def));
		fprintf(f, t->quoted ? "\"%s\"" : "%s", def);
		if (t->bounded) {
			t->format(k->min, lo, sizeof(lo));
			t->format(k->max, hi, sizeof(hi));
			fprintf(f, ", range: %s..%s", lo, hi);
		}
		fprintf(f, ")\n");
	}
}

/* "--name=value" -> "--name", for naming the flag in errors. */
static const char *flag__name(const char *arg, char *out, size_t n)
{
	size_t len = strcspn(arg, "=");

	snprintf(out, n, "%.*s", (int)len, arg);
	return out;
}

/*
 * One walk over argv. The early pass validates the flag syntax, handles --help/--version and
 * applies the KEY_EARLY keys (config.file); the late pass applies the rest over the file's
 * values, so flags win.
 */
static enum config_result flags__apply(struct config *cfg, int argc, char **argv, bool early)
{
	struct option opts[NR_KEYS + 3];
	char why[WHY_MAX], name[PATH_MAX_KEY + 2];
	enum config_result ret = CONFIG_OK;
	int saved_opterr = opterr;
	int c, prev, longindex;
	const struct key *k;

	/* A boolean flag alone means true (--web.enable-admin-api), as in Prometheus. */
	for (size_t i = 0; i < NR_KEYS; i++)
		opts[i] = (struct option){ keys[i].name,
					   keys[i].type == &config_type_bool ? optional_argument :
									      required_argument,
					   NULL, OPT_KEY + (int)i };
	opts[NR_KEYS] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	opts[NR_KEYS + 1] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	opts[NR_KEYS + 2] = (struct option){ NULL, 0, NULL, 0 };

	/* '+': no permutation, so argv[prev] is the element of the option just returned.
	 * ':': report a missing value as ':' rather than printing getopt's own message. */
	opterr = 0;
	optind = 0;
	for (;;) {
		prev = optind ? optind : 1;
		longindex = -1;
		c = getopt_long(argc, argv, "+:h", opts, &longindex);
		if (c == -1)
			break;
		/* getopt_long accepts unique prefixes; a typo should not silently set a key. */
		if (longindex >= 0 &&
		    strcmp(flag__name(argv[prev], name, sizeof(name)) + 2, opts[longindex].name)) {
			flag__error(name, "unknown flag");
			ret = CONFIG_INVALID;
			break;
		}
		if (c == '?') {
			/* optopt is set for a known long flag given a value it does not take. */
			flag__name(argv[prev], name, sizeof(name));
			flag__error(name, optopt && !strncmp(name, "--", 2) ? "takes no value"
									   : "unknown flag");
			ret = CONFIG_INVALID;
			break;
		}
		if (c == ':') {
			flag__error(flag__name(argv[prev], name, sizeof(name)), "missing value");
			ret = CONFIG_INVALID;
			break;
		}
		if (c == OPT_HELP) {
			config__usage(stdout);
			ret = CONFIG_EXIT_OK;
			break;
		}
		if (c == OPT_VERSION) {
			printf("autoprof version %s (commit %s)\n", AUTOPROF_VERSION,
			       AUTOPROF_COMMIT);
			ret = CONFIG_EXIT_OK;
			break;
		}
		k = &keys[c - OPT_KEY];
		if (!(k->flags & KEY_EARLY) != !early)
			continue;
		if (key__set(k, cfg, optarg ? optarg : "true", why, sizeof(why))) {
			snprintf(name, sizeof(name), "--%s", k->name);
			flag__error(name, "%s", why);
			ret = CONFIG_INVALID;
			break;
		}
	}
	if (ret == CONFIG_OK && optind < argc) {
		fprintf(stderr, "autoprof: %s: unexpected argument (flags are --KEY=VALUE)\n",
			argv[optind]);
		ret = CONFIG_INVALID;
	}
	opterr = saved_opterr;
	return ret;
}

/* ---- entry points --------------------------------------------------------------------------- */

static int config__defaults(struct config *cfg)
{
	char why[WHY_MAX];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NR_KEYS; i++) {
		if (key__set(&keys[i], cfg, keys[i].def, why, sizeof(why))) {
			/* Only a broken table row gets here. */
			fprintf(stderr, "autoprof: %s: bad built-in default: %s\n", keys[i].name,
				why);
			return -EINVAL;
		}
	}
	return 0;
}

enum config_result config__load(struct config *cfg, int argc, char **argv)
{
	enum config_result ret;

	if (config__defaults(cfg))
		return CONFIG_INVALID;
	ret = flags__apply(cfg, argc, argv, true);
	if (ret != CONFIG_OK)
		return ret;
	if (cfg->config_file[0]) {
		ret = config__load_file(cfg, cfg->config_file);
		if (ret != CONFIG_OK)
			return ret;
	}
	return flags__apply(cfg, argc, argv, false);
}

/* The code point of the UTF-8 sequence at s and its length; 0 when it is not one. */
static size_t utf8__decode(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t n = s[0] < 0x80 ? 1 : s[0] >> 5 == 6 ? 2 : s[0] >> 4 == 14 ? 3 : s[0] >> 3 == 30 ? 4 : 0;
	uint32_t c = n == 1 ? s[0] : s[0] & (0x7f >> n);

	for (size_t i = 1; i < n; i++) {
		if (s[i] >> 6 != 2)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past Unicode are not UTF-8. */
	if (!n || c < min[n] || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return n;
}

/* What YAML takes as it is inside double quotes: printable, and not a line break (NEL, LS, PS
 * are breaks to YAML 1.1, folded into spaces when read back). */
static bool yaml__printable(uint32_t c)
{
	return (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff && c != 0x2028 && c != 0x2029) ||
	       (c >= 0xe000 && c <= 0xfffd && c != 0xfeff) || (c >= 0x10000 && c <= 0x10ffff);
}

/* A double-quoted scalar that loads back as s: anything else escaped by its code point (a byte
 * that is not UTF-8, which only a flag can give, as the code point of its value). */
static void yaml__print_string(const char *s, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		uint32_t c;
		size_t n = utf8__decode(p, &c);

		if (!n) {
			c = *p;
			n = 1;
		} else if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", (int)c);
			p += n;
			continue;
		} else if (yaml__printable(c)) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		if (c < 0x100)
			fprintf(f, "\\x%02x", (unsigned int)c);
		else if (c < 0x10000)
			fprintf(f, "\\u%04x", (unsigned int)c);
		else
			fprintf(f, "\\U%08x", (unsigned int)c);
		p += n;
	}
	fputc('"', f);
}

/* Room for any value printed: the longest string settings, probes.attach and config.file. */
#define VALUE_MAX 4096
_Static_assert(sizeof(((struct config *)0)->probes) <= VALUE_MAX &&
		       sizeof(((struct config *)0)->config_file) <= VALUE_MAX,
	       "a string setting is longer than config__print_yaml's buffer");

void config__print_yaml(const struct config *cfg, FILE *f)
{
	const char *section = "", *dot;
	size_t section_len = 0;
	/* Not WHY_MAX: a value cut there would print, and load back, as another one. */
	char val[VALUE_MAX];

	for (size_t i = 0; i < NR_KEYS; i++) {
		const struct key *k = &keys[i];

		key__get(k, cfg, val, sizeof(val));
		/* A flag-only key would be rejected when the output is loaded back. */
		if (k->flags & KEY_FLAG_ONLY) {
			if (val[0]) {
				fprintf(f, "# --%s=", k->name);
				yaml__print_string(val, f);
				fputc('\n', f);
			}
			continue;
		}
		dot = strchr(k->name, '.');
		if ((size_t)(dot - k->name) != section_len ||
		    strncmp(k->name, section, section_len)) {
			section = k->name;
			section_len = dot - k->name;
			fprintf(f, "%.*s:\n", (int)section_len, section);
		}
		fprintf(f, "  %s: ", dot + 1);
		if (k->type->quoted)
			yaml__print_string(val, f);
		else
			fputs(val, f);
		fputc('\n', f);
	}
}
