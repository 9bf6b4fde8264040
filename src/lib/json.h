/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_JSON_H
#define AUTOPROF_LIB_JSON_H

/*
 * JSON through jansson, in and out: request bodies parsed only after one pass over their bytes
 * has bounded what jansson would build, and documents written straight into a struct buf.
 * Objects keep the order their keys were set in (jansson 2.14 always does; older ones are
 * asked to with JSON_PRESERVE_ORDER), so a document is written in the order it was built.
 */
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/buf.h"

/*
 * Parses body[0, len) as one JSON object, followed by white space only. Before jansson sees it,
 * the body is refused when objects and arrays nest deeper than max_depth (the body's own object
 * is depth 1) or hold more than max_members members and elements in all: a request of a known
 * shape never comes near either, and a huge or deeply nested body then costs one pass over its
 * bytes, not a tree of a million values. flags are jansson's decoding flags
 * (JSON_REJECT_DUPLICATES). Returns a new reference, the caller's to json_decref; NULL with a
 * reason in why (jansson's, or which bound) when the body is no such object.
 */
json_t *json__parse_object(const char *body, size_t len, unsigned int max_depth,
			   unsigned int max_members, size_t flags, char *why, size_t why_len);

/*
 * Appends v to out as JSON, written as jansson's dump flags say (JSON_COMPACT: no spaces; 0:
 * ", " and ": " on one line). json__writeln appends a newline after it. Both take v's reference
 * (v is released, whatever happens), so a document can be built in the call: a NULL v, what a
 * build that ran out of memory returns, is -ENOMEM. 0 or -ENOMEM.
 */
int json__write(struct buf *out, json_t *v, size_t flags);
int json__writeln(struct buf *out, json_t *v, size_t flags);

/*
 * s as a JSON string (NULL as ""). Names from the system (a thread's comm, a path) are bytes,
 * not always UTF-8, which JSON must be: each byte that does not start a valid UTF-8 sequence is
 * written as U+FFFD. A new reference; NULL when out of memory.
 */
json_t *json__str(const char *s);
/*
 * v as a JSON number: jansson's integers are signed 64-bit, so v above INT64_MAX (no count or
 * duration autoprof keeps gets there) becomes a real of about the same value. A new reference;
 * NULL when out of memory.
 */
json_t *json__u64(uint64_t v);

#endif
