// SPDX-License-Identifier: GPL-2.0-only
/* What a latency probe request says: the API's JSON body, the config's short form. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
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

/* ---- the API's JSON body ------------------------------------------------------------------- */

/*
 * The body's object and "inside" nest two deep (one more: a wrong-typed value, refused with its
 * key named); a request has nine members, duplicates aside.
 */
#define SPEC_MAX_DEPTH	 3
#define SPEC_MAX_MEMBERS 64

struct reason {
	char *s;
	size_t len;
};

static int fail(struct reason *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct reason *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->s, r->len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A string value into out, n bytes with its NUL. */
static int get_string(struct reason *r, const json_t *v, char *out, size_t n, const char *what)
{
	size_t len;

	if (!json_is_string(v))
		return fail(r, "%s: want a string", what);
	len = json_string_length(v);
	if (len >= n)
		return fail(r, "%s: too long", what);
	/* No NUL inside: jansson refuses \u0000 without JSON_ALLOW_NUL. */
	memcpy(out, json_string_value(v), len + 1);
	return 0;
}

static int get_uint(struct reason *r, const json_t *v, uint32_t *out, uint32_t max,
		    const char *what)
{
	json_int_t n;

	if (!json_is_integer(v) || (n = json_integer_value(v)) < 0)
		return fail(r, "%s: want a whole number", what);
	if (n > max)
		return fail(r, "%s: out of range", what);
	*out = (uint32_t)n;
	return 0;
}

static bool ident_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static const char *ident_end(const char *s)
{
	if (!ident_start(*s))
		return NULL;
	while (ident_start(*s) || (*s >= '0' && *s <= '9'))
		s++;
	return s;
}

int probespec__capture(const char *expr)
{
	const char *s = ident_end(expr);
	int members = 0;

	while (s && *s) {
		if (s[0] == '-' && s[1] == '>')
			s += 2;
		else if (s[0] == '.')
			s++;
		else
			return -EINVAL;
		if (++members > PROBE_MEMBERS_MAX)
			return -EINVAL;
		s = ident_end(s);
	}
	return s ? 0 : -EINVAL;
}

static int get_captures(struct reason *r, const json_t *v, struct probe_spec *p)
{
	size_t i;
	json_t *e;
	int err;

	if (!json_is_array(v))
		return fail(r, "capture: want a list of names, e.g. [\"len\", \"req->id\"]");
	if (json_array_size(v) > PROBE_CAPTURES_MAX)
		return fail(r, "capture: at most %d values", PROBE_CAPTURES_MAX);
	json_array_foreach(v, i, e) {
		err = get_string(r, e, p->capture[i], sizeof(p->capture[i]), "capture");
		if (err)
			return err;
		if (probespec__capture(p->capture[i]))
			return fail(r,
				    "capture: \"%s\" is not NAME, NAME->MEMBER or NAME.MEMBER "
				    "(at most %d members)",
				    p->capture[i], PROBE_MEMBERS_MAX);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(p->capture[j], p->capture[i]))
				return fail(r, "capture: \"%s\" twice", p->capture[i]);
	}
	p->nr_captures = (uint32_t)json_array_size(v);
	return 0;
}

static int get_inside(struct reason *r, json_t *obj, struct probe_spec *p)
{
	const char *key;
	char v[16];
	json_t *val;
	int err;

	if (!json_is_object(obj))
		return fail(r, "inside: want {\"probe\": ID, \"latency\": \"slow\"}");
	json_object_foreach(obj, key, val) {
		if (!strcmp(key, "probe")) {
			err = get_uint(r, val, &p->inside, UINT32_MAX, "inside.probe");
			if (err)
				return err;
			continue;
		}
		if (strcmp(key, "latency"))
			return fail(r, "inside: unknown key \"%s\" (probe, latency)", key);
		err = get_string(r, val, v, sizeof(v), "inside.latency");
		if (err)
			return err;
		if (!strcmp(v, "slow"))
			p->inside_latency = STORE_LATENCY_SLOW;
		else if (!strcmp(v, "fast"))
			p->inside_latency = STORE_LATENCY_FAST;
		else if (!strcmp(v, "any"))
			p->inside_latency = STORE_LATENCY_ANY;
		else
			return fail(r, "inside.latency: \"%s\" is not slow, fast or any", v);
	}
	if (!p->inside)
		return fail(r, "inside: want {\"probe\": ID, \"latency\": \"slow\"}");
	return 0;
}

static int spec_member(struct reason *r, const char *key, json_t *v, struct probe_spec *p)
{
	char s[64];
	int err;

	if (!strcmp(key, "binary"))
		return get_string(r, v, p->binary, sizeof(p->binary), "binary");
	if (!strcmp(key, "function"))
		return get_string(r, v, p->function, sizeof(p->function), "function");
	if (!strcmp(key, "location"))
		return get_string(r, v, p->location, sizeof(p->location), "location");
	if (!strcmp(key, "name"))
		return get_string(r, v, p->name, sizeof(p->name), "name");
	if (!strcmp(key, "pid"))
		return get_uint(r, v, &p->pid, 0x3fffffff, "pid");
	if (!strcmp(key, "threshold")) {
		err = get_string(r, v, s, sizeof(s), "threshold");
		if (!err && probespec__duration(s, &p->threshold_ns))
			return fail(r, "threshold: \"%s\" is not a duration (e.g. 5ms, 250us)", s);
		return err;
	}
	if (!strcmp(key, "inside"))
		return get_inside(r, v, p);
	if (!strcmp(key, "capture"))
		return get_captures(r, v, p);
	return fail(r,
		    "unknown key \"%s\" (binary, function, location, pid, name, threshold, "
		    "inside, capture)",
		    key);
}

static int check_spec(struct reason *r, struct probe_spec *p)
{
	char file[PROBE_LOCATION_MAX];
	unsigned int line;

	if (!p->binary[0])
		return fail(r, "binary: required (an absolute path)");
	if (p->binary[0] != '/')
		return fail(r, "binary: \"%s\" is not an absolute path", p->binary);
	if (!p->function[0] == !p->location[0])
		return fail(r, "want exactly one of function and location");
	if (p->location[0] && probespec__location(p->location, file, sizeof(file), &line))
		return fail(r, "location: \"%s\" is not FILE:LINE", p->location);
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
	struct reason r = { why, why_len };
	const char *key;
	char detail[256];
	json_t *root, *v;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->inside_latency = STORE_LATENCY_SLOW;
	body = body ? body : "";
	root = json__parse_object(body, strlen(body), SPEC_MAX_DEPTH, SPEC_MAX_MEMBERS, 0, detail,
				  sizeof(detail));
	if (!root)
		return fail(&r, "want a JSON object: %s", detail);
	/* In the body's order, so that the first mistake is the one reported. */
	json_object_foreach(root, key, v) {
		err = spec_member(&r, key, v, out);
		if (err)
			goto out;
	}
	err = check_spec(&r, out);
out:
	json_decref(root);
	return err;
}

int probespec__parse_short(const char *s, size_t len, struct probe_spec *out, char *why,
			   size_t why_len)
{
	struct reason r = { why, why_len };
	const char *colon = memchr(s, ':', len);
	size_t blen, rest;

	memset(out, 0, sizeof(*out));
	out->inside_latency = STORE_LATENCY_SLOW;
	if (!colon || colon == s || (size_t)(colon - s) + 1 >= len)
		return fail(&r, "want BINARY:FUNCTION or BINARY:FILE:LINE");
	blen = (size_t)(colon - s);
	rest = len - blen - 1;
	if (blen >= sizeof(out->binary))
		return fail(&r, "binary path too long");
	memcpy(out->binary, s, blen);
	if (memchr(colon + 1, ':', rest)) {
		if (rest >= sizeof(out->location))
			return fail(&r, "location too long");
		memcpy(out->location, colon + 1, rest);
	} else {
		if (rest >= sizeof(out->function))
			return fail(&r, "function name too long");
		memcpy(out->function, colon + 1, rest);
	}
	return check_spec(&r, out);
}
