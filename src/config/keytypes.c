// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kinds of value a configuration key can have: how each is parsed (with its units),
 * bounded, stored into its struct config field and written back for --help and the printed
 * YAML; and the checks particular keys add (listen addresses, OTLP endpoints and headers,
 * readable files, memory targets, probes, ring sizes). config.c's table names one per key.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memory/memtarget.h"
#include "export/otlp_headers.h"
#include "config/config.h"
#include "config/config_priv.h"

/* ---- value kinds ---------------------------------------------------------------------------- */

/* Reads decimal digits at *s; no sign, no base prefix: config values are never negative. */
static int digits__parse(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t acc = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(acc, 10, &acc) ||
		    __builtin_add_overflow(acc, (uint64_t)(*p - '0'), &acc))
			return -ERANGE;
	}
	*s = p;
	*v = acc;
	return 0;
}

int config__parse_uint(const char *s, uint64_t *v)
{
	int err = digits__parse(&s, v);

	if (err)
		return err;
	return *s ? -EINVAL : 0;
}

static void uint__format(uint64_t v, char *out, size_t n)
{
	snprintf(out, n, "%llu", (unsigned long long)v);
}

struct unit {
	const char *name;
	uint64_t mult;
	bool out; /* used when formatting */
};

/* Largest first: formatting walks down, parsing requires each unit smaller than the last. */
static const struct unit duration_units[] = {
	{ "d", 86400 * NSEC_PER_SEC, false }, /* accepted, but 48h reads better than 2d */
	{ "h", 3600 * NSEC_PER_SEC, true },
	{ "m", 60 * NSEC_PER_SEC, true },
	{ "s", NSEC_PER_SEC, true },
	{ "ms", NSEC_PER_MSEC, true },
	{ "us", 1000, true },
	{ "µs", 1000, false },
	{ "ns", 1, true },
};

static const struct unit byte_units[] = {
	{ "TiB", 1024 * GiB, true },
	{ "GiB", GiB, true },
	{ "MiB", MiB, true },
	{ "KiB", KiB, true },
	{ "TB", 1000000000000ULL, false },
	{ "GB", 1000000000ULL, false },
	{ "MB", 1000000ULL, false },
	{ "KB", 1000ULL, false },
	{ "B", 1, true },
	{ "", 1, false },
};

static const struct unit *unit__find(const struct unit *units, size_t count, const char *s,
				     size_t len)
{
	for (size_t i = 0; i < count; i++) {
		if (strlen(units[i].name) == len && !strncmp(units[i].name, s, len))
			return &units[i];
	}
	return NULL;
}

/* Writes v as the largest units that divide it, e.g. 5400s -> "1h30m", 1536KiB -> "1536KiB". */
static void unit__format(const struct unit *units, size_t count, bool all, uint64_t v,
			 char *out, size_t n)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < count && used < n; i++) {
		if (!units[i].out || v < units[i].mult)
			continue;
		if (!all && v % units[i].mult)
			continue;
		used += snprintf(out + used, n - used, "%llu%s",
				 (unsigned long long)(v / units[i].mult), units[i].name);
		v %= units[i].mult;
		if (!v)
			break;
	}
	if (!out[0])
		snprintf(out, n, "0%s", all ? "s" : "B");
}

/* Go/Prometheus-style "1h30m", "500ms": integer components, units strictly decreasing. */
static int duration__parse(const char *s, uint64_t *v)
{
	uint64_t total = 0, last = UINT64_MAX;

	if (!*s)
		return -EINVAL;
	while (*s) {
		const struct unit *u;
		const char *unit;
		uint64_t num;
		int err;

		err = digits__parse(&s, &num);
		if (err)
			return err;
		for (unit = s; *s && (*s < '0' || *s > '9'); s++)
			;
		u = unit__find(duration_units, ARRAY_SIZE(duration_units), unit, s - unit);
		if (!u || u->mult >= last)
			return -EINVAL;
		last = u->mult;
		if (__builtin_mul_overflow(num, u->mult, &num) ||
		    __builtin_add_overflow(total, num, &total))
			return -ERANGE;
	}
	*v = total;
	return 0;
}

static void duration__format(uint64_t v, char *out, size_t n)
{
	unit__format(duration_units, ARRAY_SIZE(duration_units), true, v, out, n);
}

/* A count with an optional binary (KiB = 1024) or SI (KB = 1000) suffix. */
static int bytes__parse(const char *s, uint64_t *v)
{
	const struct unit *u;
	uint64_t num;
	int err;

	err = digits__parse(&s, &num);
	if (err)
		return err;
	while (*s == ' ')
		s++;
	u = unit__find(byte_units, ARRAY_SIZE(byte_units), s, strlen(s));
	if (!u)
		return -EINVAL;
	if (__builtin_mul_overflow(num, u->mult, v))
		return -ERANGE;
	return 0;
}

static void bytes__format(uint64_t v, char *out, size_t n)
{
	unit__format(byte_units, ARRAY_SIZE(byte_units), false, v, out, n);
}

/* A size, or "auto" (0): the size is autoprof's to choose. */
static int bytes_auto__parse(const char *s, uint64_t *v)
{
	if (!strcmp(s, "auto")) {
		*v = 0;
		return 0;
	}
	return bytes__parse(s, v) ?: (*v ? 0 : -EINVAL);
}

static void bytes_auto__format(uint64_t v, char *out, size_t n)
{
	if (!v)
		snprintf(out, n, "auto");
	else
		bytes__format(v, out, n);
}

static int level__parse(const char *s, uint64_t *v)
{
	enum log_level level;

	if (log__parse_level(s, &level))
		return -EINVAL;
	*v = level;
	return 0;
}

static void level__format(uint64_t v, char *out, size_t n)
{
	snprintf(out, n, "%s", log__level_name((enum log_level)v));
}

static const char *const unwind_modes[] = { [CONFIG_UNWIND_FP] = "fp",
					     [CONFIG_UNWIND_TABLE] = "table" };

static int unwind_mode__parse(const char *s, uint64_t *v)
{
	for (size_t i = 0; i < ARRAY_SIZE(unwind_modes); i++) {
		if (!strcmp(s, unwind_modes[i])) {
			*v = i;
			return 0;
		}
	}
	return -EINVAL;
}

static void unwind_mode__format(uint64_t v, char *out, size_t n)
{
	snprintf(out, n, "%s", v < ARRAY_SIZE(unwind_modes) ? unwind_modes[v] : "?");
}

/* Numeric fields are uint32_t, uint64_t or an enum; memcpy of the right width stores them. */
static void field__store(void *field, size_t size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (size == sizeof(v32))
		memcpy(field, &v32, sizeof(v32));
	else
		memcpy(field, &v, sizeof(v));
}

static uint64_t field__load(const void *field, size_t size)
{
	uint32_t v32;
	uint64_t v;

	if (size == sizeof(v32)) {
		memcpy(&v32, field, sizeof(v32));
		return v32;
	}
	memcpy(&v, field, sizeof(v));
	return v;
}

static int number__set(const struct key *k, void *field, const char *s, char *why, size_t n)
{
	const struct key_type *t = k->type;
	char lo[32], hi[32];
	uint64_t v;
	int err;

	err = t->parse(s, &v);
	if (err == -ERANGE) {
		snprintf(why, n, "%s is too large", s);
		return -EINVAL;
	}
	if (err) {
		snprintf(why, n, t->invalid, s);
		return -EINVAL;
	}
	if (t->bounded && !(t->zero_is_word && !v) && (v < k->min || v > k->max)) {
		t->format(k->min, lo, sizeof(lo));
		t->format(k->max, hi, sizeof(hi));
		snprintf(why, n, "%s is out of range %s..%s", s, lo, hi);
		return -EINVAL;
	}
	if (k->check && k->check(s, v, why, n))
		return -EINVAL;
	field__store(field, k->size, v);
	return 0;
}

static void number__get(const struct key *k, const void *field, char *out, size_t n)
{
	k->type->format(field__load(field, k->size), out, n);
}

static int string__set(const struct key *k, void *field, const char *s, char *why, size_t n)
{
	size_t len = strlen(s);

	if (len >= k->size) {
		snprintf(why, n, "value is too long (%zu bytes, at most %zu)", len, k->size - 1);
		return -EINVAL;
	}
	if (k->check && k->check(s, 0, why, n))
		return -EINVAL;
	memcpy(field, s, len + 1);
	return 0;
}

static void string__get(const struct key *k, const void *field, char *out, size_t n)
{
	(void)k;
	snprintf(out, n, "%s", (const char *)field);
}

const struct key_type config_type_string = {
	.metavar = "string",
	.quoted = true,
	.set = string__set,
	.get = string__get,
};

const struct key_type config_type_path = {
	.metavar = "path",
	.quoted = true,
	.set = string__set,
	.get = string__get,
};

const struct key_type config_type_uint = {
	.metavar = "uint",
	.bounded = true,
	.set = number__set,
	.get = number__get,
	.parse = config__parse_uint,
	.format = uint__format,
	.invalid = "invalid number \"%s\" (want a non-negative integer)",
};

const struct key_type config_type_duration = {
	.metavar = "duration",
	.bounded = true,
	.set = number__set,
	.get = number__get,
	.parse = duration__parse,
	.format = duration__format,
	.invalid = "invalid duration \"%s\" (want e.g. 500ms, 30s, 5m, 1h30m)",
};

const struct key_type config_type_bytes = {
	.metavar = "bytes",
	.bounded = true,
	.set = number__set,
	.get = number__get,
	.parse = bytes__parse,
	.format = bytes__format,
	.invalid = "invalid size \"%s\" "
		   "(want e.g. 65536, 512KiB, 64MiB, 1GiB; KB/MB/GB are 1000-based)",
};

const struct key_type config_type_bytes_auto = {
	.metavar = "bytes|auto",
	.bounded = true,
	.set = number__set,
	.get = number__get,
	.parse = bytes_auto__parse,
	.format = bytes_auto__format,
	.invalid = "invalid size \"%s\" (want auto, or e.g. 256KiB, 1MiB; KB/MB/GB are 1000-based)",
	.zero_is_word = true,
};

const struct key_type config_type_level = {
	.metavar = "level",
	.set = number__set,
	.get = number__get,
	.parse = level__parse,
	.format = level__format,
	.invalid = "invalid log level \"%s\" (want error, warn, info or debug)",
};

const struct key_type config_type_unwind_mode = {
	.metavar = "mode",
	.set = number__set,
	.get = number__get,
	.parse = unwind_mode__parse,
	.format = unwind_mode__format,
	.invalid = "invalid unwind mode \"%s\" (want table or fp)",
};

static int bool__parse(const char *s, uint64_t *v)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(s, yes[i]) || !strcmp(s, no[i])) {
			*v = !strcmp(s, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}

static void bool__format(uint64_t v, char *out, size_t n)
{
	snprintf(out, n, "%s", v ? "true" : "false");
}

const struct key_type config_type_bool = {
	.metavar = "bool",
	.set = number__set,
	.get = number__get,
	.parse = bool__parse,
	.format = bool__format,
	.invalid = "invalid boolean \"%s\" (want true or false)",
};

/* A fraction 0..1 with up to 6 decimals ("1", "0.5", ".25"), stored in millionths. */
static int ratio__parse(const char *s, uint64_t *v)
{
	uint64_t whole = 0, frac = 0, scale = 1000000;
	int err;

	if (*s != '.') {
		err = digits__parse(&s, &whole);
		if (err)
			return err;
		/* Let the bounds name the range for small numbers like 2. */
		if (whole > 1000)
			return -ERANGE;
	}
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (scale == 1)
				return -EINVAL; /* finer than a millionth */
			scale /= 10;
			frac += (uint64_t)(*s - '0') * scale;
		}
	}
	if (*s)
		return -EINVAL;
	*v = whole * 1000000 + frac;
	return 0;
}

static void ratio__format(uint64_t v, char *out, size_t n)
{
	int len = snprintf(out, n, "%llu.%06llu", (unsigned long long)(v / 1000000),
			   (unsigned long long)(v % 1000000));

	/* Shortest form: 0.500000 -> 0.5, 1.000000 -> 1. */
	while (len > 0 && (size_t)len < n && out[len - 1] == '0')
		out[--len] = '\0';
	if (len > 0 && (size_t)len < n && out[len - 1] == '.')
		out[--len] = '\0';
}

const struct key_type config_type_ratio = {
	.metavar = "ratio",
	.bounded = true,
	.set = number__set,
	.get = number__get,
	.parse = ratio__parse,
	.format = ratio__format,
	.invalid = "invalid ratio \"%s\" (want a number from 0 to 1, e.g. 0.25)",
};

/* ---- validators ----------------------------------------------------------------------------- */

/* [host]:port where host is empty, an IPv4 address or a bracketed IPv6 address. */
int listen_address__check(const char *arg, uint64_t unused, char *why, size_t n)
{
	char host[INET6_ADDRSTRLEN + 1];
	unsigned char addr[sizeof(struct in6_addr)];
	const char *s = arg, *port, *end;
	uint64_t portnum;
	int family = AF_INET;
	size_t len;

	(void)unused;
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end || end[1] != ':')
			goto bad_form;
		family = AF_INET6;
		len = end - s - 1;
		s++;
		port = end + 2;
	} else {
		/* The last colon, so an unbracketed IPv6 address fails as a host, not a port. */
		end = strrchr(s, ':');
		if (!end)
			goto bad_form;
		len = end - s;
		port = end + 1;
	}
	if (len >= sizeof(host) || (family == AF_INET6 && !len))
		goto bad_host;
	memcpy(host, s, len);
	host[len] = '\0';
	if (len && inet_pton(family, host, addr) != 1)
		goto bad_host;
	if (config__parse_uint(port, &portnum) || portnum > 65535) {
		snprintf(why, n, "invalid listen address \"%s\": port must be a number 0..65535",
			 arg);
		return -EINVAL;
	}
	return 0;
bad_form:
	snprintf(why, n, "invalid listen address \"%s\": want [host]:port, e.g. \":9740\"", arg);
	return -EINVAL;
bad_host:
	snprintf(why, n,
		 "invalid listen address \"%s\": host must be empty, an IPv4 address or [IPv6]",
		 arg);
	return -EINVAL;
}

/* BPF ring buffers must be a power-of-two multiple of the page size, or map creation fails. */
/* "" (off) or an http:// or https:// URL; the OTLP path is appended by the client. */
int otlp_endpoint__check(const char *s, uint64_t unused, char *why, size_t n)
{
	(void)unused;
	if (!*s || !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8))
		return 0;
	snprintf(why, n, "\"%s\" is not an http:// or https:// URL", s);
	return -EINVAL;
}

/* Name=value pairs separated by commas; names are HTTP header tokens. */
int otlp_headers__check(const char *s, uint64_t unused, char *why, size_t n)
{
	const char *p = s;

	(void)unused;
	while (*p) {
		const char *name = p;

		while (*p && *p != '=' && *p != ',' && (isalnum((unsigned char)*p) || strchr("-_.", *p)))
			p++;
		if (p == name || *p != '=') {
			snprintf(why, n, "want Name=value[,Name=value...], got \"%s\"", s);
			return -EINVAL;
		}
		while (*p && *p != ',')
			p++;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Read once here so that a bad file stops autoprof before anything is attached. */
int otlp_headers_file__check(const char *s, uint64_t unused, char *why, size_t n)
{
	struct otlp_header *hdrs = NULL;
	char *text = NULL;
	size_t nr;
	int err;

	(void)unused;
	if (!*s)
		return 0;
	err = otlp_headers__read_file(s, &text, &hdrs, &nr, why, n);
	free(hdrs);
	free(text);
	return err;
}

/* "" or a file autoprof can read (a TLS certificate, key or CA bundle). */
int readable_file__check(const char *s, uint64_t unused, char *why, size_t n)
{
	(void)unused;
	if (*s && access(s, R_OK)) {
		snprintf(why, n, "cannot read \"%s\": %s", s, strerror(errno));
		return -EINVAL;
	}
	return 0;
}

/* PATTERN[,PATTERN...]: executable-name globs, or cgroup:DIR (a cgroup directory here). */
int memory_targets__check(const char *s, uint64_t unused, char *why, size_t n)
{
	char *copy = strdup(s), *save = NULL, *tok;
	unsigned int count = 0;
	int err = 0;

	(void)unused;
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		struct memtarget_spec spec;

		while (*tok == ' ')
			tok++;
		if (*tok)
			err = memtarget__parse_config(tok, &spec, why, n);
		if (!err && *tok && ++count > MEMORY_MAX_TARGETS) {
			snprintf(why, n, "at most %d targets", MEMORY_MAX_TARGETS);
			err = -EINVAL;
		}
	}
	free(copy);
	return err;
}

/* Syntax only: main resolves each probe in its binary (and exits 2) before attaching anything. */
int probes__check_list(const char *s, uint64_t unused, char *why, size_t n)
{
	const char *p = s;

	(void)unused;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *colon = memchr(p, ':', len);

		if (len && (*p != '/' || !colon || colon == p + len - 1)) {
			snprintf(why, n, "want /BINARY:FUNCTION or /BINARY:FILE:LINE[,...], got \"%.*s\"",
				 (int)len, p);
			return -EINVAL;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

int ringbuf_size__check(const char *s, uint64_t v, char *why, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);

	if (page <= 0)
		page = 4096;
	if (!v)
		return 0; /* auto */
	if (v & (v - 1)) {
		snprintf(why, n, "%s is not a power of two", s);
		return -EINVAL;
	}
	if (v % (uint64_t)page) {
		snprintf(why, n, "%s is not a multiple of the %ld-byte page size", s, page);
		return -EINVAL;
	}
	return 0;
}
