// SPDX-License-Identifier: GPL-2.0-only
/* What a profile type means: see query.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpumem.h"
#include "memory/memory.h"
#include "query/query.h"

struct query_result {
	struct store_result view; /* what the encoders read */
	struct store_result *stored;
	struct store_row *live; /* heap, gpuheap: the collector's rows, freed with store_rows__free */
	size_t nr_live;
};

static int stored(const struct query_sources *src, enum profile_type type,
		  const struct query_window *w, const struct store_filter *filter,
		  struct store_result **out)
{
	if (w->window_ns)
		return store__query(src->store, type, w->window_ns, filter, out);
	return store__query_secs(src->store, type, w->first_sec, w->last_sec, filter, out);
}

/* alloc_* of the window's allocations, inuse_* of the allocations live now: heap (memory's
 * sampled ones) or gpuheap (every GPU allocation). */
static int heap(const struct query_sources *src, enum profile_type type,
		const struct query_window *w, const struct store_filter *filter,
		struct query_result *qr)
{
	bool gpu = type == PROFILE_GPUHEAP;
	const struct store_result *res;
	int err;

	err = stored(src, gpu ? PROFILE_GPUALLOCS : PROFILE_ALLOCS, w, filter, &qr->stored);
	if (!err && gpu && src->gpumem)
		err = gpumem__live_rows(src->gpumem, filter, &qr->live, &qr->nr_live);
	else if (!err && !gpu && src->memory)
		err = memory__live_rows(src->memory, filter, &qr->live, &qr->nr_live);
	if (err)
		return err;
	res = qr->stored;
	qr->view = (struct store_result){
		.type = type,
		.start_ns = res->start_ns,
		.duration_ns = res->duration_ns,
		.period = !gpu && src->memory ? memory__mean_interval(src->memory) : res->period,
		.rows = calloc(res->nr_rows + qr->nr_live + 1, sizeof(*qr->view.rows)),
	};
	if (!qr->view.rows)
		return -ENOMEM;
	memcpy(qr->view.rows, res->rows, res->nr_rows * sizeof(*res->rows));
	if (qr->nr_live)
		memcpy(qr->view.rows + res->nr_rows, qr->live, qr->nr_live * sizeof(*qr->live));
	qr->view.nr_rows = res->nr_rows + qr->nr_live;
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
	const struct store_result *res;
	int err;

	both.latency = STORE_LATENCY_ANY;
	err = stored(src, PROFILE_CPU, w, &both, &qr->stored);
	if (err)
		return err;
	res = qr->stored;
	qr->view = *res;
	qr->view.type = PROFILE_LATENCY;
	qr->view.rows = calloc(res->nr_rows + 1, sizeof(*qr->view.rows));
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
		err = stored(src, type, w, filter, &qr->stored);
		if (!err)
			qr->view = *qr->stored;
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
	/* A derived view (heap, latency) owns only its row array; the rows are the stored and
	 * live ones. */
	if (qr->stored && qr->view.rows != qr->stored->rows)
		free(qr->view.rows);
	store_rows__free(qr->live, qr->nr_live);
	store_result__free(qr->stored);
	free(qr);
}
