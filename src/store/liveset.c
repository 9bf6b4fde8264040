// SPDX-License-Identifier: GPL-2.0-only
/* A live set of allocations and the heap rows it makes: liveset.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/liveset.h"
#include "store/store.h"
#include "symbolize/dso.h"

#define BUCKETS_MIN 256
#define COMM_LEN 16
#define EXE_LEN 64

struct entry {
	struct entry *next;
	struct live_alloc a; /* comm, exe and frames point into this entry */
	char comm[COMM_LEN + 1];
	char exe[EXE_LEN];
};

struct liveset {
	pthread_mutex_t lock;
	struct entry **buckets;
	uint32_t nr_buckets, nr, max;
	uint64_t bytes;
};

static uint32_t hash(uint32_t pid, uint8_t space, uint64_t ptr)
{
	uint64_t h = ((ptr >> 4) ^ space) * 0x9e3779b97f4a7c15ULL ^ pid * 0xff51afd7ed558ccdULL;

	return (uint32_t)(h >> 32);
}

static void entry__free(struct entry *e)
{
	for (uint32_t i = 0; i < e->a.nr_frames; i++)
		dso__put(e->a.frames[i].dso);
	free((void *)e->a.frames);
	free(e);
}

struct liveset *liveset__new(uint32_t max)
{
	struct liveset *ls = calloc(1, sizeof(*ls));

	if (!ls)
		return NULL;
	pthread_mutex_init(&ls->lock, NULL);
	ls->max = max;
	return ls;
}

void liveset__free(struct liveset *ls)
{
	if (!ls)
		return;
	for (uint32_t i = 0; i < ls->nr_buckets; i++) {
		while (ls->buckets[i]) {
			struct entry *e = ls->buckets[i];

			ls->buckets[i] = e->next;
			entry__free(e);
		}
	}
	free(ls->buckets);
	pthread_mutex_destroy(&ls->lock);
	free(ls);
}

/* Room for one more entry at a load of at most one per bucket. 0 or -ENOMEM. */
static int grow(struct liveset *ls)
{
	uint32_t n = ls->nr_buckets ? ls->nr_buckets * 2 : BUCKETS_MIN;
	struct entry **b;

	if (ls->nr < ls->nr_buckets)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < ls->nr_buckets; i++) {
		while (ls->buckets[i]) {
			struct entry *e = ls->buckets[i];
			uint32_t at = hash(e->a.pid, e->a.space, e->a.ptr) & (n - 1);

			ls->buckets[i] = e->next;
			e->next = b[at];
			b[at] = e;
		}
	}
	free(ls->buckets);
	ls->buckets = b;
	ls->nr_buckets = n;
	return 0;
}

/* The slot pointing at (pid, space, ptr)'s entry, or at the NULL ending its chain; NULL when
 * the set has no buckets yet. */
static struct entry **find(struct liveset *ls, uint32_t pid, uint8_t space, uint64_t ptr)
{
	struct entry **pp;

	if (!ls->nr_buckets)
		return NULL;
	pp = &ls->buckets[hash(pid, space, ptr) & (ls->nr_buckets - 1)];
	while (*pp && ((*pp)->a.pid != pid || (*pp)->a.space != space || (*pp)->a.ptr != ptr))
		pp = &(*pp)->next;
	return pp;
}

static void unlink_entry(struct liveset *ls, struct entry **pp)
{
	struct entry *e = *pp;

	*pp = e->next;
	ls->nr--;
	ls->bytes -= e->a.bytes;
	entry__free(e);
}

int liveset__add(struct liveset *ls, const struct live_alloc *a)
{
	struct frame *frames = malloc((a->nr_frames ? a->nr_frames : 1) * sizeof(*frames));
	struct entry *e = calloc(1, sizeof(*e)), **pp;
	int err = 0;

	if (!e || !frames) {
		free(e);
		free(frames);
		return -ENOMEM;
	}
	pthread_mutex_lock(&ls->lock);
	pp = find(ls, a->pid, a->space, a->ptr);
	/* Its free was lost (or never seen): this allocation replaces it. */
	if (pp && *pp)
		unlink_entry(ls, pp);
	if (ls->max && ls->nr >= ls->max) {
		err = -ENOSPC;
		goto out;
	}
	err = grow(ls);
	if (err)
		goto out;
	e->a = *a;
	snprintf(e->comm, sizeof(e->comm), "%s", a->comm ? a->comm : "");
	snprintf(e->exe, sizeof(e->exe), "%s", a->exe ? a->exe : "");
	e->a.comm = e->comm;
	e->a.exe = e->exe;
	for (uint32_t i = 0; i < a->nr_frames; i++)
		frames[i] = (struct frame){ dso__get(a->frames[i].dso), a->frames[i].addr };
	e->a.frames = frames;
	pp = &ls->buckets[hash(a->pid, a->space, a->ptr) & (ls->nr_buckets - 1)];
	e->next = *pp;
	*pp = e;
	ls->nr++;
	ls->bytes += a->bytes;
	e = NULL;
	frames = NULL;
out:
	pthread_mutex_unlock(&ls->lock);
	free(e);
	free(frames);
	return err;
}

int liveset__remove(struct liveset *ls, uint32_t pid, uint8_t space, uint64_t ptr)
{
	struct entry **pp;
	int err = -ENOENT;

	pthread_mutex_lock(&ls->lock);
	pp = find(ls, pid, space, ptr);
	if (pp && *pp) {
		unlink_entry(ls, pp);
		err = 0;
	}
	pthread_mutex_unlock(&ls->lock);
	return err;
}

void liveset__drop_pid(struct liveset *ls, uint32_t pid)
{
	pthread_mutex_lock(&ls->lock);
	for (uint32_t i = 0; i < ls->nr_buckets; i++) {
		struct entry **pp = &ls->buckets[i];

		while (*pp) {
			if ((*pp)->a.pid == pid)
				unlink_entry(ls, pp);
			else
				pp = &(*pp)->next;
		}
	}
	pthread_mutex_unlock(&ls->lock);
}

/* The order rows are aggregated in: entries equal under it make one row. */
static int entry__cmp(const void *a, const void *b)
{
	const struct live_alloc *x = &(*(const struct entry *const *)a)->a;
	const struct live_alloc *y = &(*(const struct entry *const *)b)->a;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->gpu_api != y->gpu_api)
		return x->gpu_api < y->gpu_api ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->nr_frames != y->nr_frames)
		return x->nr_frames < y->nr_frames ? -1 : 1;
	return memcmp(x->frames, y->frames, x->nr_frames * sizeof(*x->frames));
}

int liveset__rows(struct liveset *ls, const struct store_filter *filter,
		  struct store_row **rows_out, size_t *nr_out)
{
	struct store_row *rows = NULL;
	struct entry **all = NULL;
	size_t n = 0, nr = 0;
	int err = 0;

	*rows_out = NULL;
	*nr_out = 0;
	pthread_mutex_lock(&ls->lock);
	all = malloc((ls->nr ? ls->nr : 1) * sizeof(*all));
	rows = calloc(ls->nr ? ls->nr : 1, sizeof(*rows));
	if (!all || !rows) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < ls->nr_buckets; i++)
		for (struct entry *e = ls->buckets[i]; e; e = e->next)
			if (store_filter__wants_pid(filter, e->a.pid))
				all[n++] = e;
	qsort(all, n, sizeof(*all), entry__cmp);
	for (size_t i = 0; i < n; i++) {
		const struct live_alloc *a = &all[i]->a;
		struct frame *frames;

		if (nr && !entry__cmp(&all[i - 1], &all[i])) {
			rows[nr - 1].values[2] += a->objects;
			rows[nr - 1].values[3] += a->bytes;
			continue;
		}
		frames = malloc((a->nr_frames ? a->nr_frames : 1) * sizeof(*frames));
		if (!frames) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t k = 0; k < a->nr_frames; k++)
			frames[k] = (struct frame){ dso__get(a->frames[k].dso), a->frames[k].addr };
		rows[nr++] = (struct store_row){
			.frames = frames,
			.nr_frames = a->nr_frames,
			.pid = a->pid,
			.tid = a->tid,
			.comm = strdup(a->comm),
			.exe = strdup(a->exe),
			.values = { 0, 0, a->objects, a->bytes },
			.exe_path = "",
			.container_id = "",
			.service = "",
			.gpu_api = a->gpu_api,
			.gpu = a->gpu,
		};
	}
out:
	pthread_mutex_unlock(&ls->lock);
	free(all);
	if (err) {
		store_rows__free(rows, nr);
		return err;
	}
	*rows_out = rows;
	*nr_out = nr;
	return 0;
}

void liveset__for_each(struct liveset *ls, void (*fn)(const struct live_alloc *a, void *ctx),
		       void *ctx)
{
	pthread_mutex_lock(&ls->lock);
	for (uint32_t i = 0; i < ls->nr_buckets; i++)
		for (struct entry *e = ls->buckets[i]; e; e = e->next)
			fn(&e->a, ctx);
	pthread_mutex_unlock(&ls->lock);
}

void liveset__count(struct liveset *ls, uint64_t *entries, uint64_t *bytes)
{
	pthread_mutex_lock(&ls->lock);
	*entries = ls->nr;
	*bytes = ls->bytes;
	pthread_mutex_unlock(&ls->lock);
}
