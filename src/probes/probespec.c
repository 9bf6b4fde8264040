// SPDX-License-Identifier: GPL-2.0-only
/* What a latency probe request says: the API's JSON body, the config's short form. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/probespec.h"

int probespec__duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}};
	char *end;
	double v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	v = strtod(s, &end);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		v *= units[i].mult;
		if (v < 1 || v > 3600e9)
			return -EINVAL;
		*ns = (uint64_t)(v + 0.5);
		return 0;
	}
	return -EINVAL;
}

int probespec__location(const char *loc, char *file, size_t file_len, unsigned int *line)
{
	const char *colon = strrchr(loc, ':');
	char *end;
	unsigned long n;
	size_t len;

	if (!colon || colon == loc || !isdigit((unsigned char)colon[1]))
		return -EINVAL;
	n = strtoul(colon + 1, &end, 10);
	len = (size_t)(colon - loc);
	if (*end || !n || n > 10000000 || len >= file_len)
		return -EINVAL;
	memcpy(file, loc, len);
	file[len] = '\0';
	*line = (unsigned int)n;
	return 0;
}

/* ---- a JSON object of known keys ---------------------------------------------------------- */

struct cursor {
	const char *s;
	char *why;
	size_t why_len;
};

static void skip_ws(struct cursor *c)
{
	while (isspace((unsigned char)*c->s))
		c->s++;
}

static int fail(struct cursor *c, const char *fmt, const char *arg)
{
	snprintf(c->why, c->why_len, fmt, arg);
	return -EINVAL;
}

/* A JSON string into out (escapes \" \\ \/ \n \t; no \u beyond ASCII). */
static int parse_string(struct cursor *c, char *out, size_t n, const char *what)
{
	size_t i = 0;

	skip_ws(c);
	if (*c->s != '"')
		return fail(c, "%s: want a string", what);
	for (c->s++; *c->s && *c->s != '"'; c->s++) {
		char ch = *c->s;

		if ((unsigned char)ch < 0x20)
			return fail(c, "%s: control character in string", what);
		if (ch == '\\') {
			c->s++;
			switch (*c->s) {
			case '"':
			case '\\':
			case '/':
				ch = *c->s;
				break;
			case 'n':
				ch = '\n';
				break;
			case 't':
				ch = '\t';
				break;
			default:
				return fail(c, "%s: unsupported escape in string", what);
			}
		}
		if (i + 1 >= n)
			return fail(c, "%s: too long", what);
		out[i++] = ch;
	}
	if (*c->s != '"')
		return fail(c, "%s: unterminated string", what);
	c->s++;
	out[i] = '\0';
	return 0;
}

static int parse_uint(struct cursor *c, uint32_t *out, uint32_t max, const char *what)
{
	unsigned long long v = 0;

	skip_ws(c);
	if (!isdigit((unsigned char)*c->s))
		return fail(c, "%s: want a whole number", what);
	for (; isdigit((unsigned char)*c->s); c->s++) {
		v = v * 10 + (unsigned long long)(*c->s - '0');
		if (v > max)
			return fail(c, "%s: out of range", what);
	}
	*out = (uint32_t)v;
	return 0;
}

/* Calls fn for each key of an object; the value is fn's to consume. */
static int parse_object(struct cursor *c, int (*fn)(struct cursor *, const char *, void *),
			void *arg)
{
	char key[32];
	int err;

	skip_ws(c);
	if (*c->s != '{')
		return fail(c, "%s", "want a JSON object");
	c->s++;
	skip_ws(c);
	if (*c->s == '}') {
		c->s++;
		return 0;
	}
	for (;;) {
		err = parse_string(c, key, sizeof(key), "key");
		if (err)
			return err;
		skip_ws(c);
		if (*c->s != ':')
			return fail(c, "%s", "want ':' after a key");
		c->s++;
		err = fn(c, key, arg);
		if (err)
			return err;
		skip_ws(c);
		if (*c->s == '}') {
			c->s++;
			return 0;
		}
		if (*c->s != ',')
			return fail(c, "%s", "want ',' or '}' in the object");
		c->s++;
	}
}

static int inside_key(struct cursor *c, const char *key, void *arg)
{
	struct probe_spec *p = arg;
	char v[16];
	int err;

	if (!strcmp(key, "probe"))
		return parse_uint(c, &p->inside, UINT32_MAX, "inside.probe");
	if (strcmp(key, "latency"))
		return fail(c, "inside: unknown key \"%s\" (probe, latency)", key);
	err = parse_string(c, v, sizeof(v), "inside.latency");
	if (err)
		return err;
	if (!strcmp(v, "slow"))
		p->inside_latency = STORE_LATENCY_SLOW;
	else if (!strcmp(v, "fast"))
		p->inside_latency = STORE_LATENCY_FAST;
	else if (!strcmp(v, "any"))
		p->inside_latency = STORE_LATENCY_ANY;
	else
		return fail(c, "inside.latency: \"%s\" is not slow, fast or any", v);
	return 0;
}

static int spec_key(struct cursor *c, const char *key, void *arg)
{
	struct probe_spec *p = arg;
	char v[64];
	int err;

	if (!strcmp(key, "binary"))
		return parse_string(c, p->binary, sizeof(p->binary), "binary");
	if (!strcmp(key, "function"))
		return parse_string(c, p->function, sizeof(p->function), "function");
	if (!strcmp(key, "location"))
		return parse_string(c, p->location, sizeof(p->location), "location");
	if (!strcmp(key, "name"))
		return parse_string(c, p->name, sizeof(p->name), "name");
	if (!strcmp(key, "pid"))
		return parse_uint(c, &p->pid, 0x3fffffff, "pid");
	if (!strcmp(key, "threshold")) {
		err = parse_string(c, v, sizeof(v), "threshold");
		if (!err && probespec__duration(v, &p->threshold_ns))
			return fail(c, "threshold: \"%s\" is not a duration (e.g. 5ms, 250us)", v);
		return err;
	}
	if (!strcmp(key, "inside")) {
		err = parse_object(c, inside_key, p);
		if (!err && !p->inside)
			return fail(c, "%s", "inside: want {\"probe\": ID, \"latency\": \"slow\"}");
		return err;
	}
	return fail(c,
		    "unknown key \"%s\" (binary, function, location, pid, name, threshold, "
		    "inside)",
		    key);
}

static int check_spec(struct cursor *c, struct probe_spec *p)
{
	char file[PROBE_LOCATION_MAX];
	unsigned int line;

	if (!p->binary[0])
		return fail(c, "%s", "binary: required (an absolute path)");
	if (p->binary[0] != '/')
		return fail(c, "binary: \"%s\" is not an absolute path", p->binary);
	if (!p->function[0] == !p->location[0])
		return fail(c, "%s", "want exactly one of function and location");
	if (p->location[0] && probespec__location(p->location, file, sizeof(file), &line))
		return fail(c, "location: \"%s\" is not FILE:LINE", p->location);
	if (!p->name[0]) {
		const char *n = p->function[0] ? p->function : p->location;
		size_t len = strnlen(n, sizeof(p->name) - 1);

		memcpy(p->name, n, len);
		p->name[len] = '\0';
	}
	return 0;
}

int probespec__parse(const char *body, struct probe_spec *out, char *why, size_t why_len)
{
	struct cursor c = {body ? body : "", why, why_len};
	int err;

	memset(out, 0, sizeof(*out));
	out->inside_latency = STORE_LATENCY_SLOW;
	err = parse_object(&c, spec_key, out);
	if (err)
		return err;
	skip_ws(&c);
	if (*c.s)
		return fail(&c, "%s", "trailing characters after the JSON object");
	return check_spec(&c, out);
}

int probespec__parse_short(const char *s, size_t len, struct probe_spec *out, char *why,
			   size_t why_len)
{
	struct cursor c = {s, why, why_len};
	const char *colon = memchr(s, ':', len);
	size_t blen, rest;

	memset(out, 0, sizeof(*out));
	out->inside_latency = STORE_LATENCY_SLOW;
	if (!colon || colon == s || (size_t)(colon - s) + 1 >= len)
		return fail(&c, "%s", "want BINARY:FUNCTION or BINARY:FILE:LINE");
	blen = (size_t)(colon - s);
	rest = len - blen - 1;
	if (blen >= sizeof(out->binary))
		return fail(&c, "%s", "binary path too long");
	memcpy(out->binary, s, blen);
	if (memchr(colon + 1, ':', rest)) {
		if (rest >= sizeof(out->location))
			return fail(&c, "%s", "location too long");
		memcpy(out->location, colon + 1, rest);
	} else {
		if (rest >= sizeof(out->function))
			return fail(&c, "%s", "function name too long");
		memcpy(out->function, colon + 1, rest);
	}
	return check_spec(&c, out);
}
