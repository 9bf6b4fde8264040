// SPDX-License-Identifier: GPL-2.0-only
/* The live table of sampled allocations (a free drops one) and the heap's rows from it. */
#define pr_fmt(fmt) "memory: " fmt

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "store/store.h"
#include "symbolize/dso.h"
#include "bpf/memory.skel.h"
#include "memory/memory.h"
#include "memory/memory_priv.h"

#define LIVE_BUCKETS_MIN 1024

/* ---- the live table ------------------------------------------------------------------------- */

static uint32_t live_hash(uint32_t pid, uint64_t ptr)
{
	uint64_t h = (ptr >> 4) * 0x9e3779b97f4a7c15ULL ^ pid * 0xff51afd7ed558ccdULL;

	return (uint32_t)(h >> 32);
}

static void live__free(struct live *l)
{
	for (uint32_t i = 0; i < l->nr_frames; i++)
		dso__put(l->frames[i].dso);
	free(l->frames);
	free(l);
}

int live__grow(struct memory *m)
{
	uint32_t n = m->nr_buckets ? m->nr_buckets * 2 : LIVE_BUCKETS_MIN;
	struct live **b;

	if (m->nr_live < m->nr_buckets)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->nr_buckets; i++) {
		while (m->buckets[i]) {
			struct live *l = m->buckets[i];

			m->buckets[i] = l->next;
			l->next = b[live_hash(l->pid, l->ptr) & (n - 1)];
			b[live_hash(l->pid, l->ptr) & (n - 1)] = l;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nr_buckets = n;
	return 0;
}

/* The slot pointing at (pid, ptr)'s entry, or at the NULL ending its chain. */
void live__insert(struct memory *m, struct live *l)
{
	l->next = m->buckets[live_hash(l->pid, l->ptr) & (m->nr_buckets - 1)];
	m->buckets[live_hash(l->pid, l->ptr) & (m->nr_buckets - 1)] = l;
	m->nr_live++;
	m->live_bytes += l->bytes;
}

struct live **live__find(struct memory *m, uint32_t pid, uint64_t ptr)
{
	struct live **pp;

	if (!m->nr_buckets)
		return NULL;
	pp = &m->buckets[live_hash(pid, ptr) & (m->nr_buckets - 1)];
	while (*pp && ((*pp)->pid != pid || (*pp)->ptr != ptr))
		pp = &(*pp)->next;
	return pp;
}

void live__remove(struct memory *m, struct live **pp)
{
	struct live *l = *pp;

	*pp = l->next;
	m->nr_live--;
	m->live_bytes -= l->bytes;
	live__free(l);
}

/* Drops every live allocation of pid, here and in BPF. */
void live__drop_pid(struct memory *m, uint32_t pid)
{
	int fd = bpf_map__fd(m->skel->maps.memory_live);
	struct memory_key key, next, *prev = NULL;

	for (uint32_t i = 0; i < m->nr_buckets; i++) {
		struct live **pp = &m->buckets[i];

		while (*pp) {
			if ((*pp)->pid == pid)
				live__remove(m, pp);
			else
				pp = &(*pp)->next;
		}
	}
	/* BPF may hold entries user space never heard of (a lost event): walk the map itself. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (prev && prev->pid == pid)
			bpf_map_delete_elem(fd, prev);
		key = next;
		prev = &key;
	}
	if (prev && prev->pid == pid)
		bpf_map_delete_elem(fd, prev);
}

/* ---- heap queries --------------------------------------------------------------------------- */

static bool pid_wanted(const struct store_filter *f, uint32_t pid)
{
	if (!f || !f->nr_pids)
		return true;
	for (size_t i = 0; i < f->nr_pids; i++)
		if (f->pids[i] == pid)
			return true;
	return false;
}

static int live__cmp(const void *a, const void *b)
{
	const struct live *x = *(const struct live *const *)a, *y = *(const struct live *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->nr_frames != y->nr_frames)
		return x->nr_frames < y->nr_frames ? -1 : 1;
	return memcmp(x->frames, y->frames, x->nr_frames * sizeof(*x->frames));
}

int memory__live_rows(struct memory *m, const struct store_filter *filter,
		      struct store_row **rows_out, size_t *nr_out)
{
	struct store_row *rows = NULL;
	struct live **all = NULL;
	size_t n = 0, nr = 0;
	int err = 0;

	*rows_out = NULL;
	*nr_out = 0;
	pthread_mutex_lock(&m->lock);
	all = malloc((m->nr_live ? m->nr_live : 1) * sizeof(*all));
	if (!all) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < m->nr_buckets; i++)
		for (struct live *l = m->buckets[i]; l; l = l->next)
			if (pid_wanted(filter, l->pid))
				all[n++] = l;
	qsort(all, n, sizeof(*all), live__cmp);
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct live *l = all[i];
		struct store_row *r;
		struct frame *frames;
		struct mproc *p;

		if (nr && !live__cmp(&all[i - 1], &all[i])) {
			rows[nr - 1].values[2] += l->objects;
			rows[nr - 1].values[3] += l->bytes;
			continue;
		}
		frames = malloc((l->nr_frames ? l->nr_frames : 1) * sizeof(*frames));
		if (!frames) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t k = 0; k < l->nr_frames; k++)
			frames[k] = (struct frame){ dso__get(l->frames[k].dso), l->frames[k].addr };
		p = *mproc__find(m, l->pid);
		r = &rows[nr++];
		*r = (struct store_row){
			.frames = frames,
			.nr_frames = l->nr_frames,
			.pid = l->pid,
			.tid = l->tid,
			.comm = strdup(l->comm),
			.exe = strdup(p ? p->exe : ""),
			.values = { 0, 0, l->objects, l->bytes },
			.exe_path = "",
			.container_id = "",
			.service = "",
		};
	}
out:
	pthread_mutex_unlock(&m->lock);
	free(all);
	if (err) {
		store_rows__free(rows, nr);
		return err;
	}
	*rows_out = rows;
	*nr_out = nr;
	return 0;
}

uint64_t memory__mean_interval(const struct memory *m)
{
	return m->mean;
}

