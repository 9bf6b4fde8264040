// SPDX-License-Identifier: GPL-2.0-only
/*
 * The time-sliced store. Stacks and label sets are interned once, reference counted by the rows
 * that use them; rows (stack, labels, type) -> summed values live in one-second slots, a ring
 * that covers the retention. Memory is accounted as it is allocated: past the limit the oldest
 * slots go first, and only when the current second alone exceeds it are samples dropped.
 */
#define pr_fmt(fmt) "store: " fmt

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/hash.h"
#include "lib/log.h"
#include "lib/timeconst.h"
#include "symbolize/dso.h"
#include "store/store.h"

struct stack {
	struct stack *next;
	uint64_t hash;
	uint32_t refcnt;
	uint32_t nr;
	struct frame frames[];
};

struct labels {
	struct labels *next;
	uint64_t hash;
	uint32_t refcnt;
	uint32_t pid, tid;
	char comm[16];
	uint8_t trace[24]; /* trace_id then span_id; all zero: no span */
	bool has_trace;
	uint8_t latency;
	uint8_t gpu_api;
	uint16_t gpu;
	uint32_t probe;
	/* Process strings, one allocation: exe, exe_path, container_id, service, and a probe's
	 * captured values (probes.c). */
	const char *exe_path;
	const char *container_id;
	const char *service;
	const char *args;
	size_t strs_len;
	char exe[];
};

struct row {
	struct stack *stack; /* NULL: empty entry */
	struct labels *labels;
	uint32_t type;
	uint64_t values[PROFILE_MAX_VALUES];
};

struct slot {
	int64_t sec; /* CLOCK_MONOTONIC second this slot holds, -1 when empty */
	struct row *rows; /* open addressing, cap a power of two */
	uint32_t nr, cap;
};

/* A chained hash table of interned objects that start with (next, hash). */
struct itab {
	void **buckets;
	uint32_t nr_buckets;
	uint32_t count;
};

struct store {
	pthread_mutex_t lock;
	struct store_opts opts;
	struct slot *slots;
	uint32_t nr_slots;
	struct itab stacks;
	struct itab labels;
	uint64_t period[PROFILE__MAX];
	uint64_t bytes;
	uint64_t nr_rows;
	uint64_t frames;
	uint64_t samples_added;
	uint64_t samples_dropped_nomem;
	uint64_t samples_too_old;
	uint64_t slots_evicted_memory;
};

struct result_priv {
	struct store_result pub;
	struct store *st;
	struct stack **stacks;
	struct labels **labels;
};

static uint64_t now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

struct store *store__new(const struct store_opts *opts)
{
	struct store *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	pthread_mutex_init(&st->lock, NULL);
	st->opts = *opts;
	/* One more than the retention holds the second now being filled. */
	st->nr_slots = (uint32_t)((opts->retention_ns + NSEC_PER_SEC - 1) / NSEC_PER_SEC) + 1;
	st->slots = calloc(st->nr_slots, sizeof(*st->slots));
	if (!st->slots) {
		free(st);
		return NULL;
	}
	for (uint32_t i = 0; i < st->nr_slots; i++)
		st->slots[i].sec = -1;
	st->bytes = sizeof(*st) + st->nr_slots * sizeof(*st->slots);
	return st;
}

uint64_t store__retention_ns(const struct store *st)
{
	return st->opts.retention_ns;
}

void store__set_period(struct store *st, enum profile_type type, uint64_t period)
{
	if ((unsigned int)type < PROFILE__MAX)
		st->period[type] = period;
}

static void stack__put(struct store *st, struct stack *s)
{
	if (--s->refcnt)
		return;
	/* Unlink from the intern table. */
	void **pp = &st->stacks.buckets[s->hash & (st->stacks.nr_buckets - 1)];

	while (*pp != s)
		pp = (void **)*pp;
	*pp = s->next;
	st->stacks.count--;
	for (uint32_t i = 0; i < s->nr; i++)
		dso__put(s->frames[i].dso);
	st->frames -= s->nr;
	st->bytes -= sizeof(*s) + s->nr * sizeof(struct frame);
	free(s);
}

static void labels__put(struct store *st, struct labels *l)
{
	if (--l->refcnt)
		return;
	void **pp = &st->labels.buckets[l->hash & (st->labels.nr_buckets - 1)];

	while (*pp != l)
		pp = (void **)*pp;
	*pp = l->next;
	st->labels.count--;
	st->bytes -= sizeof(*l) + l->strs_len;
	free(l);
}

static void slot__clear(struct store *st, struct slot *sl)
{
	for (uint32_t i = 0; i < sl->cap; i++) {
		if (!sl->rows[i].stack)
			continue;
		stack__put(st, sl->rows[i].stack);
		labels__put(st, sl->rows[i].labels);
	}
	st->nr_rows -= sl->nr;
	st->bytes -= (uint64_t)sl->cap * sizeof(struct row);
	free(sl->rows);
	sl->rows = NULL;
	sl->nr = sl->cap = 0;
	sl->sec = -1;
}

void store__free(struct store *st)
{
	if (!st)
		return;
	for (uint32_t i = 0; i < st->nr_slots; i++)
		slot__clear(st, &st->slots[i]);
	free(st->slots);
	free(st->stacks.buckets);
	free(st->labels.buckets);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* Makes room for one more entry; 0 or -ENOMEM. */
static int itab__grow(struct store *st, struct itab *t)
{
	uint32_t n;
	void **b;

	if (t->count < t->nr_buckets)
		return 0;
	n = t->nr_buckets ? t->nr_buckets * 2 : 1024;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nr_buckets; i++) {
		void *e = t->buckets[i];

		while (e) {
			/* Both interned types begin with (next, hash). */
			struct stack *s = e;
			void *next = s->next;

			s->next = b[s->hash & (n - 1)];
			b[s->hash & (n - 1)] = s;
			e = next;
		}
	}
	free(t->buckets);
	st->bytes += (uint64_t)(n - t->nr_buckets) * sizeof(*b);
	t->buckets = b;
	t->nr_buckets = n;
	return 0;
}

static struct stack *stack__intern(struct store *st, const struct frame *frames, uint32_t nr)
{
	uint64_t h = hash__bytes(frames, nr * sizeof(*frames), nr);
	struct stack *s;

	if (itab__grow(st, &st->stacks))
		return NULL;
	for (s = st->stacks.buckets[h & (st->stacks.nr_buckets - 1)]; s; s = s->next) {
		if (s->hash == h && s->nr == nr && !memcmp(s->frames, frames, nr * sizeof(*frames))) {
			s->refcnt++;
			return s;
		}
	}
	s = malloc(sizeof(*s) + nr * sizeof(*frames));
	if (!s)
		return NULL;
	s->hash = h;
	s->refcnt = 1;
	s->nr = nr;
	memcpy(s->frames, frames, nr * sizeof(*frames));
	for (uint32_t i = 0; i < nr; i++)
		dso__get(frames[i].dso);
	s->next = st->stacks.buckets[h & (st->stacks.nr_buckets - 1)];
	st->stacks.buckets[h & (st->stacks.nr_buckets - 1)] = s;
	st->stacks.count++;
	st->frames += nr;
	st->bytes += sizeof(*s) + nr * sizeof(*frames);
	return s;
}

static struct labels *labels__intern(struct store *st, const struct sample *smp)
{
	struct {
		uint32_t pid, tid;
		char comm[16];
		uint8_t trace[24];
		uint32_t probe;
		uint32_t latency;
		uint32_t gpu; /* api << 16 | device */
	} key = { smp->pid,   smp->tid, { 0 }, { 0 }, smp->probe, smp->probe ? smp->latency : 0,
		  (uint32_t)smp->gpu_api << 16 | smp->gpu };
	const char *exe = smp->exe ? smp->exe : "";
	const char *path = smp->exe_path ? smp->exe_path : "";
	const char *cid = smp->container_id ? smp->container_id : "";
	const char *svc = smp->service ? smp->service : "";
	const char *args = smp->probe && smp->args ? smp->args : "";
	size_t exe_len = strlen(exe), path_len = strlen(path), cid_len = strlen(cid);
	size_t svc_len = strlen(svc), args_len = strlen(args);
	size_t strs_len = exe_len + path_len + cid_len + svc_len + args_len + 5;
	struct labels *l;
	uint64_t h;

	strncpy(key.comm, smp->comm ? smp->comm : "", sizeof(key.comm) - 1);
	if (smp->trace_id) {
		memcpy(key.trace, smp->trace_id, 16);
		memcpy(key.trace + 16, smp->span_id, 8);
	}
	h = hash__bytes(&key, sizeof(key), 0) ^ hash__bytes(exe, exe_len, 1) ^
	    hash__bytes(path, path_len, 2) ^ hash__bytes(cid, cid_len, 3) ^
	    hash__bytes(svc, svc_len, 4) ^ hash__bytes(args, args_len, 5);
	if (itab__grow(st, &st->labels))
		return NULL;
	for (l = st->labels.buckets[h & (st->labels.nr_buckets - 1)]; l; l = l->next) {
		if (l->hash == h && l->pid == key.pid && l->tid == key.tid &&
		    !memcmp(l->comm, key.comm, sizeof(key.comm)) &&
		    l->has_trace == !!smp->trace_id && !memcmp(l->trace, key.trace, 24) &&
		    l->probe == key.probe && l->latency == key.latency &&
		    l->gpu_api == smp->gpu_api && l->gpu == smp->gpu && !strcmp(l->exe, exe) &&
		    !strcmp(l->exe_path, path) && !strcmp(l->container_id, cid) &&
		    !strcmp(l->service, svc) && !strcmp(l->args, args)) {
			l->refcnt++;
			return l;
		}
	}
	l = malloc(sizeof(*l) + strs_len);
	if (!l)
		return NULL;
	l->hash = h;
	l->refcnt = 1;
	l->pid = key.pid;
	l->tid = key.tid;
	memcpy(l->comm, key.comm, sizeof(key.comm));
	memcpy(l->trace, key.trace, sizeof(key.trace));
	l->has_trace = !!smp->trace_id;
	l->probe = key.probe;
	l->latency = (uint8_t)key.latency;
	l->gpu_api = smp->gpu_api;
	l->gpu = smp->gpu;
	memcpy(l->exe, exe, exe_len + 1);
	memcpy(l->exe + exe_len + 1, path, path_len + 1);
	memcpy(l->exe + exe_len + path_len + 2, cid, cid_len + 1);
	memcpy(l->exe + exe_len + path_len + cid_len + 3, svc, svc_len + 1);
	l->exe_path = l->exe + exe_len + 1;
	l->container_id = l->exe + exe_len + path_len + 2;
	l->service = l->exe + exe_len + path_len + cid_len + 3;
	memcpy(l->exe + exe_len + path_len + cid_len + svc_len + 4, args, args_len + 1);
	l->args = l->exe + exe_len + path_len + cid_len + svc_len + 4;
	l->strs_len = strs_len;
	l->next = st->labels.buckets[h & (st->labels.nr_buckets - 1)];
	st->labels.buckets[h & (st->labels.nr_buckets - 1)] = l;
	st->labels.count++;
	st->bytes += sizeof(*l) + strs_len;
	return l;
}

static uint64_t row_hash(const struct stack *s, const struct labels *l, uint32_t type)
{
	return hash__u64((uintptr_t)s ^ ((uint64_t)(uintptr_t)l << 17) ^ type);
}

static int slot__grow(struct store *st, struct slot *sl)
{
	uint32_t cap;
	struct row *rows;

	if ((sl->nr + 1) * 4 <= sl->cap * 3)
		return 0;
	cap = sl->cap ? sl->cap * 2 : 64;
	rows = calloc(cap, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < sl->cap; i++) {
		struct row *r = &sl->rows[i];
		uint32_t j;

		if (!r->stack)
			continue;
		j = row_hash(r->stack, r->labels, r->type) & (cap - 1);
		while (rows[j].stack)
			j = (j + 1) & (cap - 1);
		rows[j] = *r;
	}
	free(sl->rows);
	st->bytes += (uint64_t)(cap - sl->cap) * sizeof(*rows);
	sl->rows = rows;
	sl->cap = cap;
	return 0;
}

/* Drops the oldest slot that is not `keep`; false when there is none. */
static bool evict_oldest(struct store *st, const struct slot *keep)
{
	struct slot *oldest = NULL;

	for (uint32_t i = 0; i < st->nr_slots; i++) {
		struct slot *sl = &st->slots[i];

		if (sl->sec >= 0 && sl != keep && (!oldest || sl->sec < oldest->sec))
			oldest = sl;
	}
	if (!oldest)
		return false;
	slot__clear(st, oldest);
	st->slots_evicted_memory++;
	return true;
}

static int add_locked(struct store *st, const struct sample *smp)
{
	int64_t sec = (int64_t)(smp->time_ns / NSEC_PER_SEC);
	struct slot *sl = &st->slots[sec % st->nr_slots];
	struct stack *stack;
	struct labels *labels;
	struct row *r;
	uint32_t j;

	/* Late beyond its slot, or older than the retention: no query could see it. */
	if (sl->sec > sec ||
	    sec < (int64_t)(now_ns() / NSEC_PER_SEC) - (int64_t)(st->nr_slots - 1)) {
		st->samples_too_old++;
		return -ERANGE;
	}
	if (sl->sec != sec) {
		slot__clear(st, sl);
		sl->sec = sec;
	}
	while (st->bytes > st->opts.memory_limit)
		if (!evict_oldest(st, sl))
			return -ENOMEM;
	if (slot__grow(st, sl))
		return -ENOMEM;
	stack = stack__intern(st, smp->frames, smp->nr_frames);
	if (!stack)
		return -ENOMEM;
	labels = labels__intern(st, smp);
	if (!labels) {
		stack__put(st, stack);
		return -ENOMEM;
	}
	j = row_hash(stack, labels, smp->type) & (sl->cap - 1);
	for (r = &sl->rows[j]; r->stack; j = (j + 1) & (sl->cap - 1), r = &sl->rows[j]) {
		if (r->stack == stack && r->labels == labels && r->type == smp->type) {
			/* The row already holds references to both. */
			stack__put(st, stack);
			labels__put(st, labels);
			goto sum;
		}
	}
	r->stack = stack;
	r->labels = labels;
	r->type = smp->type;
	memset(r->values, 0, sizeof(r->values));
	sl->nr++;
	st->nr_rows++;
sum:
	for (int i = 0; i < PROFILE_MAX_VALUES; i++)
		r->values[i] += smp->values[i];
	return 0;
}

int store__add(struct store *st, const struct sample *smp)
{
	int err;

	pthread_mutex_lock(&st->lock);
	err = add_locked(st, smp);
	if (!err)
		st->samples_added++;
	else if (err == -ENOMEM)
		st->samples_dropped_nomem++;
	pthread_mutex_unlock(&st->lock);
	return err;
}

void store_rows__free(struct store_row *rows, size_t nr)
{
	for (size_t i = 0; rows && i < nr; i++) {
		for (uint32_t k = 0; k < rows[i].nr_frames; k++)
			dso__put(rows[i].frames[k].dso);
		free((void *)rows[i].frames);
		free((void *)rows[i].comm);
		free((void *)rows[i].exe);
	}
	free(rows);
}

void store__expire(struct store *st)
{
	int64_t oldest = (int64_t)(now_ns() / NSEC_PER_SEC) - (int64_t)(st->nr_slots - 1);

	pthread_mutex_lock(&st->lock);
	for (uint32_t i = 0; i < st->nr_slots; i++)
		if (st->slots[i].sec >= 0 && st->slots[i].sec < oldest)
			slot__clear(st, &st->slots[i]);
	pthread_mutex_unlock(&st->lock);
}

bool store_filter__wants_pid(const struct store_filter *f, uint32_t pid)
{
	if (!f || !f->nr_pids)
		return true;
	for (size_t i = 0; i < f->nr_pids; i++)
		if (f->pids[i] == pid)
			return true;
	return false;
}

/* text (a captured value as probes.c writes it) against v: <0, 0, >0, or 2 if not a number. */
static int compare_value(const char *text, size_t len, int64_t v)
{
	char buf[32], *end;

	if (!len || len >= sizeof(buf))
		return 2;
	memcpy(buf, text, len);
	buf[len] = '\0';
	errno = 0;
	if (buf[0] == '-') {
		long long a = strtoll(buf, &end, 10);

		if (errno || *end)
			return 2;
		return (a > v) - (a < v);
	}
	if (buf[0] < '0' || buf[0] > '9') {
		return 2;
	} else {
		unsigned long long u = strtoull(buf, &end, 0);

		if (errno || *end)
			return 2;
		if (v < 0)
			return 1;
		return (u > (uint64_t)v) - (u < (uint64_t)v);
	}
}

bool store_where__matches(const struct store_where *w, const char *args)
{
	size_t n = strlen(w->name);

	for (const char *l = args; l && *l;) {
		const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l);
		int c;

		if ((size_t)(end - l) > n && !strncmp(l, w->name, n) && l[n] == '=') {
			c = compare_value(l + n + 1, (size_t)(end - l - n - 1), w->value);
			if (c == 2)
				return false;
			switch (w->op) {
			case STORE_WHERE_EQ:
				return !c;
			case STORE_WHERE_NE:
				return c;
			case STORE_WHERE_LT:
				return c < 0;
			case STORE_WHERE_LE:
				return c <= 0;
			case STORE_WHERE_GT:
				return c > 0;
			case STORE_WHERE_GE:
				return c >= 0;
			}
			return false;
		}
		l = nl ? nl + 1 : end;
	}
	return false;
}

static bool row_matches(const struct row *r, uint32_t type, const struct store_filter *f)
{
	if (r->type != type)
		return false;
	/* Without a probe in the filter only samples as taken: never their labelled copies. */
	if (r->labels->probe != (f ? f->probe : 0))
		return false;
	if (f && f->probe && f->latency && r->labels->latency != f->latency)
		return false;
	if (f && f->probe && f->where && !store_where__matches(f->where, r->labels->args))
		return false;
	if (!store_filter__wants_pid(f, r->labels->pid))
		return false;
	if (f && f->comm && strcmp(f->comm, r->labels->comm) && strcmp(f->comm, r->labels->exe))
		return false;
	if (f && f->trace_id && (!r->labels->has_trace || memcmp(f->trace_id, r->labels->trace, 16)))
		return false;
	if (f && f->span_id && (!r->labels->has_trace || memcmp(f->span_id, r->labels->trace + 16, 8)))
		return false;
	return true;
}

/* Result rows are found again through a temporary open-addressing index of row numbers. */
static int query_locked(struct store *st, enum profile_type type, int64_t first, int64_t last,
			const struct store_filter *f, struct result_priv *res)
{
	uint32_t *index = NULL, cap = 0;
	size_t nr = 0, rcap = 0;

	for (uint32_t s = 0; s < st->nr_slots; s++) {
		struct slot *sl = &st->slots[s];

		if (sl->sec < first || sl->sec > last)
			continue;
		for (uint32_t i = 0; i < sl->cap; i++) {
			struct row *r = &sl->rows[i];
			uint32_t j;

			if (!r->stack || !row_matches(r, type, f))
				continue;
			if ((nr + 1) * 2 > cap) {
				uint32_t ncap = cap ? cap * 2 : 256;
				uint32_t *nidx = calloc(ncap, sizeof(*nidx));

				if (!nidx)
					goto out_nomem;
				for (size_t k = 0; k < nr; k++) {
					j = row_hash(res->stacks[k], res->labels[k], type) & (ncap - 1);
					while (nidx[j])
						j = (j + 1) & (ncap - 1);
					nidx[j] = k + 1;
				}
				free(index);
				index = nidx;
				cap = ncap;
			}
			j = row_hash(r->stack, r->labels, type) & (cap - 1);
			while (index[j] && (res->stacks[index[j] - 1] != r->stack ||
					    res->labels[index[j] - 1] != r->labels))
				j = (j + 1) & (cap - 1);
			if (!index[j]) {
				if (nr == rcap) {
					size_t n = rcap ? rcap * 2 : 256;
					void *a = realloc(res->pub.rows, n * sizeof(*res->pub.rows));

					if (!a)
						goto out_nomem;
					res->pub.rows = a;
					a = realloc(res->stacks, n * sizeof(*res->stacks));
					if (!a)
						goto out_nomem;
					res->stacks = a;
					a = realloc(res->labels, n * sizeof(*res->labels));
					if (!a)
						goto out_nomem;
					res->labels = a;
					rcap = n;
				}
				res->stacks[nr] = r->stack;
				res->labels[nr] = r->labels;
				r->stack->refcnt++;
				r->labels->refcnt++;
				res->pub.rows[nr] = (struct store_row){
					.frames = r->stack->frames,
					.nr_frames = r->stack->nr,
					.pid = r->labels->pid,
					.tid = r->labels->tid,
					.comm = r->labels->comm,
					.exe = r->labels->exe,
					.exe_path = r->labels->exe_path,
					.container_id = r->labels->container_id,
					.service = r->labels->service,
					.trace_id = r->labels->has_trace ? r->labels->trace : NULL,
					.span_id = r->labels->has_trace ? r->labels->trace + 16 : NULL,
					.probe = r->labels->probe,
					.latency = r->labels->latency,
					.gpu_api = r->labels->gpu_api,
					.gpu = r->labels->gpu,
					.args = r->labels->args,
				};
				index[j] = ++nr;
				res->pub.nr_rows = nr;
			}
			for (int v = 0; v < PROFILE_MAX_VALUES; v++)
				res->pub.rows[index[j] - 1].values[v] += r->values[v];
		}
	}
	free(index);
	return 0;
out_nomem:
	free(index);
	return -ENOMEM;
}

static void release_locked(struct result_priv *res)
{
	for (size_t i = 0; i < res->pub.nr_rows; i++) {
		stack__put(res->st, res->stacks[i]);
		labels__put(res->st, res->labels[i]);
	}
}

int64_t store__now_sec(void)
{
	return (int64_t)(now_ns() / NSEC_PER_SEC);
}

int store__query_secs(struct store *st, enum profile_type type, int64_t first, int64_t last,
		      const struct store_filter *filter, struct store_result **out)
{
	uint64_t mono = now_ns(), real = now_real();
	uint64_t end = (uint64_t)(last + 1) * NSEC_PER_SEC;
	struct result_priv *res;
	int err;

	if (first > last)
		return -EINVAL;
	res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	res->st = st;
	res->pub.type = type;
	/* Whole slots; the current one ends now, not at the end of its second. */
	if (end > mono)
		end = mono;
	res->pub.duration_ns = end - (uint64_t)first * NSEC_PER_SEC;
	res->pub.start_ns = real - (mono - (uint64_t)first * NSEC_PER_SEC);
	pthread_mutex_lock(&st->lock);
	res->pub.period = (unsigned int)type < PROFILE__MAX ? st->period[type] : 0;
	err = query_locked(st, type, first, last, filter, res);
	if (err)
		release_locked(res);
	pthread_mutex_unlock(&st->lock);
	if (err) {
		res->pub.nr_rows = 0;
		store_result__free(&res->pub);
		return err;
	}
	*out = &res->pub;
	return 0;
}

int store__query(struct store *st, enum profile_type type, uint64_t window_ns,
		 const struct store_filter *filter, struct store_result **out)
{
	int64_t last = store__now_sec();
	int64_t n = (int64_t)((window_ns + NSEC_PER_SEC - 1) / NSEC_PER_SEC);

	/* The current, partly filled slot and the n - 1 before it. */
	return store__query_secs(st, type, last - (n > 0 ? n : 1) + 1, last, filter, out);
}

void store_result__free(struct store_result *pub)
{
	struct result_priv *res = (struct result_priv *)pub;

	if (!res)
		return;
	if (res->pub.nr_rows) {
		pthread_mutex_lock(&res->st->lock);
		release_locked(res);
		pthread_mutex_unlock(&res->st->lock);
	}
	free(res->pub.rows);
	free(res->stacks);
	free(res->labels);
	free(res);
}

void store__stats(struct store *st, struct store_stats *out)
{
	uint64_t slots = 0;

	pthread_mutex_lock(&st->lock);
	for (uint32_t i = 0; i < st->nr_slots; i++)
		slots += st->slots[i].sec >= 0;
	*out = (struct store_stats){
		.slots = slots,
		.rows = st->nr_rows,
		.stacks = st->stacks.count,
		.frames = st->frames,
		.bytes = st->bytes,
		.samples_added = st->samples_added,
		.samples_dropped_nomem = st->samples_dropped_nomem,
		.samples_too_old = st->samples_too_old,
		.slots_evicted_memory = st->slots_evicted_memory,
	};
	pthread_mutex_unlock(&st->lock);
}
