// SPDX-License-Identifier: GPL-2.0-only
/* What a profile type means: see query.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpumem.h"
#include "history/history.h"
#include "lib/timeconst.h"
#include "memory/memory.h"
#include "query/query.h"

/* A range ending this close to now shows the live set (heap, gpuheap) too. */
#define LIVE_SLACK_NS (10 * NSEC_PER_SEC)

struct query_result {
	struct store_result view;   /* what the encoders read */
	struct store_result *stored; /* the store's rows */
	struct history_rows *hist;   /* rows read back from disk */
	struct history_rows *snapshot; /* heap, gpuheap of a past range: the live set then */
	struct store_row *owned;     /* a row array this query made (the view's or its base's) */
	struct store_row *owned2;
	struct store_row *live; /* heap, gpuheap: the collector's rows, freed with store_rows__free */
	size_t nr_live;
};

/*
 * A CLOCK_REALTIME range: disk up to where the history has written, memory from there. The two
 * never overlap: the history writes whole seconds, and memory is asked from the first one it
 * did not write.
 */
static int ranged(const struct query_sources *src, enum profile_type type,
		  const struct query_window *w, const struct store_filter *filter,
		  struct query_result *qr)
{
	uint64_t offset = realtime_ns() - now_ns(), split = w->start_ns;
	int64_t now_sec = store__now_sec();
	int64_t oldest = now_sec - (int64_t)(store__retention_ns(src->store) / NSEC_PER_SEC) + 1;
	int64_t first, last;
	int err;

	if (w->end_ns <= w->start_ns)
		return -EINVAL;
	/* Disk first even where memory may hold the same seconds: after a restart memory holds
	 * only what came since, whatever its retention says. */
	if (src->history) {
		uint64_t written = history__written_until(src->history);

		split = written < w->end_ns ? written : w->end_ns;
		if (split < w->start_ns)
			split = w->start_ns;
		if (split > w->start_ns) {
			err = history__rows(src->history, type, w->start_ns, split, filter,
					    &qr->hist);
			if (err)
				return err;
		}
	}
	/* Memory's part: the seconds from split (rounded: the offset drifts by microseconds) to
	 * the one holding end - 1, those it still holds. An empty part still asks for one
	 * second it does not hold, for the period. */
	first = (int64_t)((split - offset + NSEC_PER_SEC / 2) / NSEC_PER_SEC);
	last = (int64_t)((w->end_ns - 1 - offset) / NSEC_PER_SEC);
	if (first < oldest)
		first = oldest;
	if (last > now_sec)
		last = now_sec;
	if (first > last || split >= w->end_ns)
		first = last = oldest - 1;
	return store__query_secs(src->store, type, first, last, filter, &qr->stored);
}

/* The rows of type over w, from the store (and the disk for a range): qr->view. */
static int stored(const struct query_sources *src, enum profile_type type,
		  const struct query_window *w, const struct store_filter *filter,
		  struct query_result *qr)
{
	const struct history_rows *h;
	int err;

	if (w->end_ns)
		err = ranged(src, type, w, filter, qr);
	else if (w->window_ns)
		err = store__query(src->store, type, w->window_ns, filter, &qr->stored);
	else
		err = store__query_secs(src->store, type, w->first_sec, w->last_sec, filter,
					&qr->stored);
	if (err)
		return err;
	qr->view = *qr->stored;
	h = qr->hist;
	if (!h)
		return 0;
	qr->view.start_ns = w->start_ns;
	qr->view.duration_ns = w->end_ns - w->start_ns;
	if (!h->nr_rows)
		return 0;
	if (!qr->view.period)
		qr->view.period = h->period;
	qr->owned = calloc(qr->stored->nr_rows + h->nr_rows + 1, sizeof(*qr->owned));
	if (!qr->owned)
		return -ENOMEM;
	memcpy(qr->owned, h->rows, h->nr_rows * sizeof(*h->rows));
	memcpy(qr->owned + h->nr_rows, qr->stored->rows,
	       qr->stored->nr_rows * sizeof(*qr->stored->rows));
	qr->view.rows = qr->owned;
	qr->view.nr_rows = h->nr_rows + qr->stored->nr_rows;
	return 0;
}

/* alloc_* of the window's allocations, inuse_* of the allocations live now: heap (memory's
 * sampled ones) or gpuheap (every GPU allocation). */
static int heap(const struct query_sources *src, enum profile_type type,
		const struct query_window *w, const struct store_filter *filter,
		struct query_result *qr)
{
	bool gpu = type == PROFILE_GPUHEAP;
	/* A range that ended before now: what was live then is the history's last snapshot of
	 * the live set in the range. */
	bool now = !w->end_ns || w->end_ns + LIVE_SLACK_NS >= realtime_ns();
	struct store_result base;
	const struct store_result *res = &base;
	const struct store_row *live;
	size_t nr_live;
	int err;

	err = stored(src, gpu ? PROFILE_GPUALLOCS : PROFILE_ALLOCS, w, filter, qr);
	if (!err && !now && src->history)
		err = history__rows(src->history, type, w->start_ns, w->end_ns, filter,
				    &qr->snapshot);
	else if (!err && now && gpu && src->gpumem)
		err = gpumem__live_rows(src->gpumem, filter, &qr->live, &qr->nr_live);
	else if (!err && now && !gpu && src->memory)
		err = memory__live_rows(src->memory, filter, &qr->live, &qr->nr_live);
	if (err)
		return err;
	live = qr->snapshot ? qr->snapshot->rows : qr->live;
	nr_live = qr->snapshot ? qr->snapshot->nr_rows : qr->nr_live;
	base = qr->view;
	qr->view = (struct store_result){
		.type = type,
		.start_ns = res->start_ns,
		.duration_ns = res->duration_ns,
		.period = !gpu && src->memory ? memory__mean_interval(src->memory) : res->period,
		.rows = calloc(res->nr_rows + nr_live + 1, sizeof(*qr->view.rows)),
	};
	qr->owned2 = qr->view.rows;
	if (!qr->view.rows)
		return -ENOMEM;
	memcpy(qr->view.rows, res->rows, res->nr_rows * sizeof(*res->rows));
	if (nr_live)
		memcpy(qr->view.rows + res->nr_rows, live, nr_live * sizeof(*live));
	qr->view.nr_rows = res->nr_rows + nr_live;
	return 0;
}

/*
 * One probe's slow and fast calls side by side: each row of the window's CPU samples inside
 * the probe's calls (either class) with its values moved to the pair of its class, (slow
 * samples, slow ns) or (fast samples, fast ns): a pprof of PROFILE_LATENCY's four sample types.
 */
static int latency_split(const struct query_sources *src, const struct query_window *w,
			 const struct store_filter *filter, struct query_result *qr)
{
	struct store_filter both = filter ? *filter : (struct store_filter){ 0 };
	struct store_result base;
	const struct store_result *res = &base;
	int err;

	both.latency = STORE_LATENCY_ANY;
	err = stored(src, PROFILE_CPU, w, &both, qr);
	if (err)
		return err;
	base = qr->view;
	qr->view.type = PROFILE_LATENCY;
	qr->view.rows = calloc(res->nr_rows + 1, sizeof(*qr->view.rows));
	qr->owned2 = qr->view.rows;
	if (!qr->view.rows)
		return -ENOMEM;
	for (size_t i = 0; i < res->nr_rows; i++) {
		const struct store_row *r = &res->rows[i];
		size_t at = r->latency == STORE_LATENCY_SLOW ? 0 : 2;

		qr->view.rows[i] = *r;
		memset(qr->view.rows[i].values, 0, sizeof(qr->view.rows[i].values));
		qr->view.rows[i].values[at] = r->values[0];
		qr->view.rows[i].values[at + 1] = r->values[1];
	}
	return 0;
}

int query__profile(const struct query_sources *src, enum profile_type type,
		   const struct query_window *w, const struct store_filter *filter,
		   struct query_result **out)
{
	struct query_result *qr = calloc(1, sizeof(*qr));
	int err;

	*out = NULL;
	if (!qr)
		return -ENOMEM;
	if (type == PROFILE_HEAP || type == PROFILE_GPUHEAP) {
		err = heap(src, type, w, filter, qr);
	} else if (type == PROFILE_LATENCY) {
		err = latency_split(src, w, filter, qr);
	} else {
		err = stored(src, type, w, filter, qr);
	}
	if (err) {
		query_result__free(qr);
		return err;
	}
	*out = qr;
	return 0;
}

const struct store_result *query_result__rows(const struct query_result *qr)
{
	return &qr->view;
}

void query_result__free(struct query_result *qr)
{
	if (!qr)
		return;
	/* The arrays a query made hold only copies of rows: the rows are the stored, read back
	 * and live ones, each freed by its owner. */
	free(qr->owned);
	free(qr->owned2);
	store_rows__free(qr->live, qr->nr_live);
	history_rows__free(qr->hist);
	history_rows__free(qr->snapshot);
	store_result__free(qr->stored);
	free(qr);
}
