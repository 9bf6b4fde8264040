/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DAEMON_PARAMS_H
#define AUTOPROF_DAEMON_PARAMS_H

/* Query parameters several routes share, each answered with a 400 saying why when bad. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/http.h"
#include "query/query.h"

#define MAX_PIDS 256
/* The window of a profile when the request names none. */
#define PARAMS_DEFAULT_SECONDS 30

struct daemon;

/* A whole-string non-negative integer, or -1. */
long long params__uint(const char *s);
/* pid=1,2,3 into pids (MAX_PIDS of them at most). 0, or a negative errno answered. */
int params__pids(const char *s, uint32_t *pids, size_t *nr, struct http_response *resp);
/*
 * start= and end= (RFC 3339 or Unix seconds) into w as a CLOCK_REALTIME range; without them,
 * a window of seconds beyond what memory holds becomes the range ending now (disk answers
 * it). A start older than the retention is moved up to it; an end in the future is now.
 * Returns 0 (w->end_ns 0: no range), or -EINVAL answered.
 */
int params__range(struct daemon *d, const struct http_request *req, long long seconds,
		  bool seconds_given, struct query_window *w, struct http_response *resp);
/*
 * where=NAME OP VALUE (OP one of = == != < <= > >=, VALUE a whole number, negative or 0x hex)
 * into w, whose name is copied into name. 0, or -EINVAL answered.
 */
int params__where(const char *s, struct store_where *w, char *name, size_t name_len,
		  struct http_response *resp);
/*
 * A profile's window: seconds= (default 30 s, or memory's retention when shorter; at most the
 * retention on disk) or start= and end= (params__range). 0, or -EINVAL answered.
 */
int params__window(struct daemon *d, const struct http_request *req, struct query_window *w,
		   struct http_response *resp);

#endif
