// SPDX-License-Identifier: GPL-2.0-only
/*
 * GET /api/v1/timeline?type=&start=&end=&step=&pid=: a profile type's totals per step, overall
 * and for the top processes, what the web view's timeline draws. Steps the history wrote come
 * from its records' summaries (each record's top processes by name, the rest as one); later
 * steps from the store, a query a step.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "daemon/params.h"
#include "daemon/webui.h"
#include "history/history.h"
#include "lib/array.h"
#include "lib/json.h"
#include "lib/keyindex.h"
#include "lib/timeconst.h"
#include "store/store.h"

#define DEFAULT_RANGE_NS (3600 * NSEC_PER_SEC)
#define MAX_STEPS 1440 /* a day by the minute */
#define STEPS_WANTED 240
#define TOP 10

struct series {
	uint32_t pid;
	char exe[16];
	uint64_t total;
	uint64_t *values; /* one per step */
};

struct tl {
	uint64_t nr_steps;
	uint64_t *total;
	struct keyindex pids; /* pid -> series[id] */
	struct series *series; /* by the pids' ids */
	uint32_t nr_series, cap_series;
	const uint32_t *only; /* pid= */
	size_t nr_only;
	int err;
};

static bool kept(const struct tl *t, uint32_t pid)
{
	if (!t->nr_only)
		return true;
	for (size_t i = 0; i < t->nr_only; i++)
		if (t->only[i] == pid)
			return true;
	return false;
}

static void add(struct tl *t, uint32_t pid, const char *exe, uint64_t step, uint64_t value)
{
	bool added;
	int64_t id;

	if (t->err || step >= t->nr_steps || !kept(t, pid))
		return;
	t->total[step] += value;
	if (!pid)
		return;
	id = keyindex__id(&t->pids, &pid, &added);
	if (id < 0) {
		t->err = (int)id;
		return;
	}
	if (added) {
		int err = array__reserve((void **)&t->series, &t->cap_series, t->pids.nr,
					 sizeof(*t->series));
		uint64_t *v = calloc(t->nr_steps, sizeof(*v));

		if (err || !v) {
			free(v);
			t->err = -ENOMEM; /* no later call adds anything */
			return;
		}
		t->series[id] = (struct series){ .pid = pid, .values = v };
		t->nr_series++;
	}
	/* Steps come oldest first: the process is named as it was last (a pid's first samples
	 * may be its parent's, before its exec). */
	if (exe && *exe)
		snprintf(t->series[id].exe, sizeof(t->series[id].exe), "%s", exe);
	t->series[id].values[step] += value;
	t->series[id].total += value;
}

static void on_point(const struct history_point *p, void *ctx)
{
	add(ctx, p->pid, p->exe, p->step, p->value);
}

/* Steps [from, nr_steps) from the store, whose seconds are CLOCK_REALTIME minus offset. */
static int from_store(struct daemon *d, struct tl *t, const struct profile_desc *desc,
		      unsigned int vi, uint64_t start, uint64_t step_ns, uint64_t from,
		      uint64_t offset)
{
	int64_t oldest = store__now_sec() -
			 (int64_t)(store__retention_ns(d->ctx.store) / NSEC_PER_SEC) + 1;

	for (uint64_t s = from; s < t->nr_steps && !t->err; s++) {
		uint64_t a = start + s * step_ns, b = a + step_ns;
		/* The store's seconds whose start falls in the step: each in exactly one. */
		int64_t first = (int64_t)((a - offset) / NSEC_PER_SEC);
		int64_t last = (int64_t)((b - offset) / NSEC_PER_SEC) - 1;
		struct store_result *res;
		int err;

		if (first < oldest)
			first = oldest;
		if (first > last)
			continue;
		err = store__query_secs(d->ctx.store, desc->type, first, last, NULL, &res);
		if (err)
			return err;
		for (size_t i = 0; i < res->nr_rows; i++)
			add(t, res->rows[i].pid, res->rows[i].exe, s, res->rows[i].values[vi]);
		store_result__free(res);
	}
	return t->err;
}

static int by_total(const void *a, const void *b)
{
	const struct series *x = a, *y = b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : (x->pid > y->pid) - (x->pid < y->pid);
}

static json_t *u64_array(const uint64_t *v, uint64_t n)
{
	json_t *a = json_array();

	for (uint64_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json__u64(v[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

void webui__timeline(const struct http_request *req, struct http_response *resp, void *ctx)
{
	struct daemon *d = ctx;
	const char *type = http__query(req, "type"), *step = http__query(req, "step");
	const char *pid = http__query(req, "pid");
	const struct profile_desc *desc = profile__by_name(type ? type : "cpu");
	uint64_t now = realtime_ns(), offset = now - now_ns(), step_ns, written = 0;
	uint64_t range_s;
	struct query_window w = { 0 };
	struct tl t = { .pids.key_size = sizeof(uint32_t) };
	uint32_t pids[MAX_PIDS];
	json_t *procs = NULL, *times = NULL;
	unsigned int vi;
	int err = 0;

	if (!desc || desc->type == PROFILE_LATENCY) {
		http__error(resp, 400, "type: \"%s\" is not a profile type (GET /api/v1/profiles)",
			    type);
		return;
	}
	/* The live heap has no past: its allocations make its timeline. */
	desc = profile__desc(query__process_type(desc->type));
	vi = desc->default_value > 0 ? (unsigned int)desc->default_value : 0;
	if (!http__query(req, "start") && !http__query(req, "end")) {
		w.end_ns = now;
		w.start_ns = now - DEFAULT_RANGE_NS;
	} else if (params__range(d, req, DEFAULT_RANGE_NS / NSEC_PER_SEC, false, &w, resp)) {
		return;
	}
	if (pid) {
		if (params__pids(pid, pids, &t.nr_only, resp))
			return;
		t.only = pids;
	}
	/* Whole seconds: the steps' times are then exact. */
	w.start_ns -= w.start_ns % NSEC_PER_SEC;
	range_s = (w.end_ns - w.start_ns + NSEC_PER_SEC - 1) / NSEC_PER_SEC;
	if (step) {
		long long n = params__uint(step);

		if (n <= 0 || (uint64_t)n > range_s || (range_s + (uint64_t)n - 1) / (uint64_t)n > MAX_STEPS) {
			http__error(resp, 400,
				    "step: \"%s\" is not a whole number of seconds from %" PRIu64
				    " to %" PRIu64 " (%d steps at most)",
				    step, (range_s + MAX_STEPS - 1) / MAX_STEPS, range_s, MAX_STEPS);
			return;
		}
		step_ns = (uint64_t)n * NSEC_PER_SEC;
	} else {
		uint64_t s = (range_s + STEPS_WANTED - 1) / STEPS_WANTED;

		/* Whole flushes of the history: a step never splits one record in two. */
		if (d->history && s < d->cfg.storage_flush_ns / NSEC_PER_SEC)
			s = d->cfg.storage_flush_ns / NSEC_PER_SEC;
		step_ns = (s ? s : 1) * NSEC_PER_SEC;
	}
	t.nr_steps = (w.end_ns - w.start_ns + step_ns - 1) / step_ns;
	t.total = calloc(t.nr_steps + 1, sizeof(*t.total));
	if (!t.total) {
		http__error(resp, 500, "out of memory");
		return;
	}
	if (d->history) {
		written = history__written_until(d->history);
		err = history__timeline(d->history, desc->type, vi, w.start_ns,
					written < w.end_ns ? written : w.end_ns, step_ns, on_point,
					&t);
		if (err == -EINVAL)
			err = 0; /* nothing written in the range */
		err = err ?: t.err;
	}
	/* Steps that start at or after what the history wrote come from memory. */
	if (!err) {
		uint64_t from = written > w.start_ns ? (written - w.start_ns + step_ns - 1) / step_ns :
						       0;

		err = from_store(d, &t, desc, vi, w.start_ns, step_ns, from, offset);
	}
	if (!err) {
		qsort(t.series, t.nr_series, sizeof(*t.series), by_total);
		procs = json_array();
		times = json_array();
		err = procs && times ? 0 : -ENOMEM;
	}
	for (uint64_t s = 0; !err && s < t.nr_steps; s++)
		err = json_array_append_new(times,
					    json__u64((w.start_ns + s * step_ns) / NSEC_PER_SEC));
	for (uint32_t i = 0; !err && i < t.nr_series && i < TOP; i++)
		err = json_array_append_new(
			procs, json_pack("{s:I,s:o,s:o,s:o}", "pid", (json_int_t)t.series[i].pid,
					 "exe", json__str(t.series[i].exe), "total",
					 json__u64(t.series[i].total), "values",
					 u64_array(t.series[i].values, t.nr_steps)));
	if (!err) {
		resp->content_type = "application/json";
		err = json__writeln(
			&resp->body,
			json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "type", desc->name,
				  "value_type", json__str(desc->values[vi].type), "unit",
				  json__str(desc->values[vi].unit), "start",
				  json__u64(w.start_ns / NSEC_PER_SEC), "end",
				  json__u64(w.end_ns / NSEC_PER_SEC), "step",
				  json__u64(step_ns / NSEC_PER_SEC), "times", times, "total",
				  u64_array(t.total, t.nr_steps), "processes", procs),
			JSON_COMPACT);
		procs = times = NULL;
	}
	json_decref(procs);
	json_decref(times);
	if (err)
		http__error(resp, err == -ENOMEM ? 500 : 503, "timeline failed: %s", strerror(-err));
	for (uint32_t i = 0; i < t.nr_series; i++)
		free(t.series[i].values);
	free(t.series);
	free(t.total);
	keyindex__free(&t.pids);
}
