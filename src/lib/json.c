// SPDX-License-Identifier: GPL-2.0-only
/* JSON through jansson: bounded parsing of request bodies, documents written into a buf. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/json.h"

/*
 * One pass over the body, strings skipped: how deep containers nest and how many members they
 * hold. Malformed input is left for jansson to refuse with its own reason.
 */
static int check_shape(const char *s, size_t len, unsigned int max_depth, unsigned int max_members,
		       char *why, size_t why_len)
{
	unsigned int depth = 0, members = 0;
	bool fresh = false; /* a container just opened, its first member not seen yet */

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		/* Every member but a container's first follows a comma. */
		if (fresh && c != '}' && c != ']')
			members++;
		fresh = false;
		switch (c) {
		case '"':
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			break;
		case '{':
		case '[':
			if (++depth > max_depth) {
				snprintf(why, why_len, "nested deeper than %u levels", max_depth);
				return -E2BIG;
			}
			fresh = true;
			break;
		case '}':
		case ']':
			if (depth)
				depth--;
			break;
		case ',':
			members++;
			break;
		}
		if (members > max_members) {
			snprintf(why, why_len, "more than %u members", max_members);
			return -E2BIG;
		}
	}
	return 0;
}

json_t *json__parse_object(const char *body, size_t len, unsigned int max_depth,
			   unsigned int max_members, size_t flags, char *why, size_t why_len)
{
	json_error_t e;
	json_t *v;

	if (check_shape(body, len, max_depth, max_members, why, why_len))
		return NULL;
	v = json_loadb(body, len, flags, &e);
	if (!v) {
		snprintf(why, why_len, "%s at line %d, column %d", e.text, e.line, e.column);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		snprintf(why, why_len, "the body is an array");
		return NULL;
	}
	return v;
}

static int append(const char *p, size_t n, void *out)
{
	return buf__append(out, p, n) ? -1 : 0;
}

int json__write(struct buf *out, json_t *v, size_t flags)
{
	size_t len = out->len;
	int err = 0;

	if (!v || json_dump_callback(v, append, out, flags | JSON_PRESERVE_ORDER)) {
		/* Half a document is no use to anyone. */
		out->len = len;
		if (out->data)
			out->data[len] = '\0';
		err = -ENOMEM;
	}
	json_decref(v);
	return err;
}

int json__writeln(struct buf *out, json_t *v, size_t flags)
{
	return json__write(out, v, flags) ?: buf__puts(out, "\n");
}

/*
 * Length of the UTF-8 sequence at s[0, n), 0 when it is not a valid one (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF; jansson refuses to write those).
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

json_t *json__str(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), i = 0, len;
	struct buf fixed = {};
	json_t *v = NULL;
	int err = 0;

	while (i < n && (len = utf8_len(p + i, n - i)))
		i += len;
	if (i == n)
		return json_stringn_nocheck((const char *)p, n);
	for (i = 0; !err && i < n; i += len ? len : 1) {
		len = utf8_len(p + i, n - i);
		err =
		    len ? buf__append(&fixed, p + i, len) : buf__append(&fixed, "\xef\xbf\xbd", 3);
	}
	if (!err)
		v = json_stringn_nocheck(fixed.data, fixed.len);
	buf__free(&fixed);
	return v;
}

json_t *json__u64(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}
