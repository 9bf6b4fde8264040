// SPDX-License-Identifier: GPL-2.0-only
/* Query parameters several routes share: see params.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "daemon/params.h"
#include "history/history.h"
#include "lib/timeconst.h"
#include "lib/timeparse.h"
#include "store/store.h"

/* A whole-string non-negative integer, or -1. */
long long params__uint(const char *s)
{
	char *end;
	long long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	return v;
}

int params__pids(const char *s, uint32_t *pids, size_t *nr, struct http_response *resp)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int err = 0;

	if (!copy) {
		http__error(resp, 500, "out of memory");
		return -ENOMEM;
	}
	*nr = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long pid = params__uint(tok);

		if (pid <= 0 || pid > 0x3fffffff) {
			http__error(resp, 400, "pid: \"%s\" is not a process id", tok);
			err = -EINVAL;
			break;
		}
		if (*nr == MAX_PIDS) {
			http__error(resp, 400, "pid: at most %d processes", MAX_PIDS);
			err = -EINVAL;
			break;
		}
		pids[(*nr)++] = (uint32_t)pid;
	}
	if (!err && !*nr) {
		http__error(resp, 400, "pid: empty list");
		err = -EINVAL;
	}
	free(copy);
	return err;
}

int params__range(struct daemon *d, const struct http_request *req, long long seconds,
		       bool seconds_given, struct query_window *w, struct http_response *resp)
{
	const char *start = http__query(req, "start"), *end = http__query(req, "end");
	uint64_t now = realtime_ns(), s = 0, e = now, reach;

	if (!start && !end) {
		if (!d->history ||
		    (uint64_t)seconds <= store__retention_ns(d->ctx.store) / NSEC_PER_SEC)
			return 0;
	}
	if (start && seconds_given) {
		http__error(resp, 400, "seconds: not with start= (the range is start to end)");
		return -EINVAL;
	}
	if (end && time__parse(end, &e)) {
		http__error(resp, 400, "end: \"%s\" is not RFC 3339 or Unix seconds", end);
		return -EINVAL;
	}
	if (start && time__parse(start, &s)) {
		http__error(resp, 400, "start: \"%s\" is not RFC 3339 or Unix seconds", start);
		return -EINVAL;
	}
	if (e > now)
		e = now;
	if (!start)
		s = e > (uint64_t)seconds * NSEC_PER_SEC ? e - (uint64_t)seconds * NSEC_PER_SEC : 0;
	reach = d->history ? history__retention_ns(d->history) :
			     store__retention_ns(d->ctx.store);
	if (s < now - reach)
		s = now - reach;
	if (s >= e) {
		http__error(resp, 400, "start: must be before end, within the last %" PRIu64 " s",
			    (uint64_t)(reach / NSEC_PER_SEC));
		return -EINVAL;
	}
	w->start_ns = s;
	w->end_ns = e;
	return 0;
}

int params__where(const char *s, struct store_where *w, char *name, size_t name_len,
		  struct http_response *resp)
{
	static const struct {
		const char *op;
		enum store_where_op v;
	} ops[] = {
		/* Two-character operators first: "<=" is not "<" then "=4". */
		{"==", STORE_WHERE_EQ}, {"!=", STORE_WHERE_NE}, {"<=", STORE_WHERE_LE},
		{">=", STORE_WHERE_GE}, {"=", STORE_WHERE_EQ},	{"<", STORE_WHERE_LT},
		{">", STORE_WHERE_GT},
	};
	size_t n = strcspn(s, "=!<>");
	const char *rest = s + n;
	char *end;

	if (!n || n >= name_len || !*rest)
		goto bad;
	memcpy(name, s, n);
	name[n] = '\0';
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t len = strlen(ops[i].op);

		if (strncmp(rest, ops[i].op, len))
			continue;
		rest += len;
		errno = 0;
		if (rest[0] == '-')
			w->value = strtoll(rest, &end, 10);
		else if (rest[0] >= '0' && rest[0] <= '9')
			w->value = (int64_t)strtoull(rest, &end, 0);
		else
			goto bad;
		if (errno || *end)
			goto bad;
		w->op = ops[i].v;
		w->name = name;
		return 0;
	}
bad:
	http__error(resp, 400, "where: \"%s\" is not NAME OP NUMBER (OP: = != < <= > >=)", s);
	return -EINVAL;
}

int params__window(struct daemon *d, const struct http_request *req, struct query_window *w,
		   struct http_response *resp)
{
	uint64_t mem_s = store__retention_ns(d->ctx.store) / NSEC_PER_SEC;
	uint64_t retention_s = d->history ? history__retention_ns(d->history) / NSEC_PER_SEC : mem_s;
	const char *seconds = http__query(req, "seconds");
	long long n = PARAMS_DEFAULT_SECONDS;

	memset(w, 0, sizeof(*w));
	if (seconds) {
		n = params__uint(seconds);
		if (n <= 0) {
			http__error(resp, 400, "seconds: \"%s\" is not a positive whole number",
				    seconds);
			return -EINVAL;
		}
		if ((uint64_t)n > retention_s) {
			http__error(resp, 400,
				    "seconds: %lld is beyond the retention of %" PRIu64 " s (%s)",
				    n, retention_s,
				    d->history ? "storage.retention" : "profile.retention");
			return -EINVAL;
		}
	} else if ((uint64_t)n > mem_s) {
		n = (long long)mem_s;
	}
	if (params__range(d, req, n, seconds != NULL, w, resp) < 0)
		return -EINVAL;
	if (!w->end_ns)
		w->window_ns = (uint64_t)n * NSEC_PER_SEC;
	return 0;
}
