/* DEPS: src/store/store.c src/lib/strtab.c src/lib/log.c tests/unit/fake_symbolizer.c src/lib/ufile.c src/lib/procfs.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The time-sliced store: aggregation, the query window, retention and expiry, filters, reference
 * counting of stacks and dsos, the memory limit and the reported period. Samples carry real
 * CLOCK_MONOTONIC times, placed relative to now.
 */
#include <errno.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "lib/timeconst.h"
#include "store/store.h"
#include "fake_symbolizer.h"
#include "testlib.h"

#define OTHER_TYPE ((enum profile_type)1) /* a second type: only its rows answer its queries */

static struct store *new_store(uint64_t retention_s, uint64_t memory_limit)
{
	struct store_opts opts = {
		.retention_ns = retention_s * NSEC_PER_SEC,
		.memory_limit = memory_limit,
	};

	return store__new(&opts);
}

static int add(struct store *st, enum profile_type type, uint64_t time_ns, uint32_t pid,
	       uint32_t tid, const char *comm, const char *exe, const struct frame *frames,
	       uint32_t nr_frames, uint64_t v0, uint64_t v1)
{
	struct sample s = {
		.type = type,
		.pid = pid,
		.tid = tid,
		.time_ns = time_ns,
		.comm = comm,
		.exe = exe,
		.frames = frames,
		.nr_frames = nr_frames,
		.values = { v0, v1 },
	};

	return store__add(st, &s);
}

static bool same_frames(const struct store_row *r, const struct frame *f, uint32_t n)
{
	if (r->nr_frames != n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (r->frames[i].dso != f[i].dso || r->frames[i].addr != f[i].addr)
			return false;
	return true;
}

/* The one row with these labels and frames, or NULL (also when there are several). */
static const struct store_row *find_row(const struct store_result *res, uint32_t pid,
					uint32_t tid, const char *comm, const char *exe,
					const struct frame *f, uint32_t n)
{
	const struct store_row *found = NULL;

	for (size_t i = 0; i < res->nr_rows; i++) {
		const struct store_row *r = &res->rows[i];

		if (r->pid != pid || r->tid != tid || strcmp(r->comm, comm) ||
		    strcmp(r->exe, exe) || !same_frames(r, f, n))
			continue;
		if (found)
			return NULL;
		found = r;
	}
	return found;
}

static int query(struct store *st, enum profile_type type, uint64_t window_s,
		 const struct store_filter *filter, struct store_result **res)
{
	*res = NULL;
	return store__query(st, type, window_s * NSEC_PER_SEC, filter, res);
}

static size_t query_rows(struct store *st, uint64_t window_s, const struct store_filter *filter)
{
	struct store_result *res;
	size_t n;

	if (query(st, PROFILE_CPU, window_s, filter, &res))
		return (size_t)-1;
	n = res->nr_rows;
	store_result__free(res);
	return n;
}

/* Two fake dsos and a few stacks over them, leaf first. */
struct dsos {
	struct dso *app, *libc;
	struct frame a[3], b[3], rev[3];
};

static int dsos__init(struct dsos *d)
{
	d->app = fake_dso__new(DSO_ELF, "/usr/bin/app", "0123abcd");
	d->libc = fake_dso__new(DSO_ELF, "/usr/lib/libc.so.6", "");
	if (!d->app || !d->libc)
		return -ENOMEM;
	d->a[0] = (struct frame){ d->libc, 0x500 };
	d->a[1] = (struct frame){ d->app, 0x2000 };
	d->a[2] = (struct frame){ d->app, 0x1000 };
	/* Same length, another leaf. */
	d->b[0] = (struct frame){ d->libc, 0x600 };
	d->b[1] = d->a[1];
	d->b[2] = d->a[2];
	/* a's frames in the other order: another stack. */
	d->rev[0] = d->a[2];
	d->rev[1] = d->a[1];
	d->rev[2] = d->a[0];
	return 0;
}

static void dsos__put(struct dsos *d)
{
	dso__put(d->app);
	dso__put(d->libc);
	d->app = d->libc = NULL;
}

TEST(identical_samples_sum_into_one_row)
{
	unsigned long live0 = fake_dso__live();
	struct store *st = new_store(60, 64 << 20);
	struct store_result *res = NULL;
	const struct store_row *r;
	struct store_stats stats;
	struct dsos d;
	uint64_t now = now_ns();

	CHECK(st);
	CHECK_EQ(dsos__init(&d), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 11, "worker", "app", d.a, 3, 1, 100), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 11, "worker", "app", d.a, 3, 2, 250), 0);
	/* Another second: another slot, merged again by the query. */
	CHECK_EQ(add(st, PROFILE_CPU, now - NSEC_PER_SEC, 10, 11, "worker", "app", d.a, 3, 3, 1),
		 0);
	store__stats(st, &stats);
	CHECK_EQ(stats.samples_added, 3);
	CHECK_EQ(stats.slots, 2);
	CHECK_EQ(stats.rows, 2);
	CHECK_EQ(stats.stacks, 1);
	CHECK_EQ(stats.frames, 3);

	CHECK_EQ(query(st, PROFILE_CPU, 5, NULL, &res), 0);
	CHECK_EQ(res->type, PROFILE_CPU);
	CHECK_EQ(res->nr_rows, 1);
	r = &res->rows[0];
	CHECK_EQ(r->values[0], 6);
	CHECK_EQ(r->values[1], 351);
	CHECK_EQ(r->values[2], 0);
	CHECK_EQ(r->values[3], 0);
	CHECK_EQ(r->pid, 10);
	CHECK_EQ(r->tid, 11);
	CHECK_STR(r->comm, "worker");
	CHECK_STR(r->exe, "app");
	CHECK_EQ(r->nr_frames, 3);
	/* Leaf first, as handed over: libc 0x500 <- app 0x2000 <- app 0x1000. */
	CHECK(r->frames[0].dso == d.libc);
	CHECK_EQ(r->frames[0].addr, 0x500);
	CHECK(r->frames[1].dso == d.app);
	CHECK_EQ(r->frames[1].addr, 0x2000);
	CHECK(r->frames[2].dso == d.app);
	CHECK_EQ(r->frames[2].addr, 0x1000);
	CHECK_STR(dso__path(r->frames[0].dso), "/usr/lib/libc.so.6");
	store_result__free(res);

	dsos__put(&d);
	store__free(st);
	CHECK_EQ(fake_dso__live(), live0);
}

TEST(different_labels_stacks_and_types_are_separate_rows)
{
	struct store *st = new_store(60, 64 << 20);
	struct store_result *res = NULL;
	const struct store_row *r;
	struct store_stats stats;
	struct dsos d;
	uint64_t now = now_ns();

	CHECK(st);
	CHECK_EQ(dsos__init(&d), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 11, "worker", "app", d.a, 3, 1, 10), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 12, "worker", "app", d.a, 3, 2, 20), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 11, "idle", "app", d.a, 3, 3, 30), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 11, "worker", "app2", d.a, 3, 4, 40), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 11, "worker", "app", d.b, 3, 5, 50), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 11, "worker", "app", d.rev, 3, 6, 60), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 10, 11, "worker", "app", d.a, 2, 7, 70), 0);
	CHECK_EQ(add(st, OTHER_TYPE, now, 10, 11, "worker", "app", d.a, 3, 8, 80), 0);
	store__stats(st, &stats);
	CHECK_EQ(stats.rows, 8);
	CHECK_EQ(stats.stacks, 4);

	CHECK_EQ(query(st, PROFILE_CPU, 5, NULL, &res), 0);
	CHECK_EQ(res->nr_rows, 7);
	r = find_row(res, 10, 11, "worker", "app", d.a, 3);
	CHECK(r);
	/* Not summed with the same (stack, labels) of the other type. */
	CHECK_EQ(r->values[0], 1);
	CHECK_EQ(r->values[1], 10);
	r = find_row(res, 10, 12, "worker", "app", d.a, 3);
	CHECK(r);
	CHECK_EQ(r->values[0], 2);
	r = find_row(res, 10, 11, "idle", "app", d.a, 3);
	CHECK(r);
	CHECK_EQ(r->values[0], 3);
	r = find_row(res, 10, 11, "worker", "app2", d.a, 3);
	CHECK(r);
	CHECK_EQ(r->values[0], 4);
	r = find_row(res, 10, 11, "worker", "app", d.b, 3);
	CHECK(r);
	CHECK_EQ(r->values[0], 5);
	r = find_row(res, 10, 11, "worker", "app", d.rev, 3);
	CHECK(r);
	CHECK_EQ(r->values[0], 6);
	r = find_row(res, 10, 11, "worker", "app", d.a, 2);
	CHECK(r);
	CHECK_EQ(r->values[0], 7);
	store_result__free(res);

	CHECK_EQ(query(st, OTHER_TYPE, 5, NULL, &res), 0);
	CHECK_EQ(res->type, OTHER_TYPE);
	CHECK_EQ(res->nr_rows, 1);
	CHECK(same_frames(&res->rows[0], d.a, 3));
	CHECK_EQ(res->rows[0].values[0], 8);
	CHECK_EQ(res->rows[0].values[1], 80);
	store_result__free(res);

	dsos__put(&d);
	store__free(st);
}

TEST(window_selects_whole_recent_slots)
{
	struct store *st = new_store(60, 64 << 20);
	struct store_result *res = NULL;
	struct dsos d;
	uint64_t now = now_ns();

	CHECK(st);
	CHECK_EQ(dsos__init(&d), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now - 5 * NSEC_PER_SEC, 1, 1, "old", "app", d.a, 3, 7, 0), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 1, 1, "new", "app", d.a, 3, 1, 0), 0);

	CHECK_EQ(query(st, PROFILE_CPU, 2, NULL, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_STR(res->rows[0].comm, "new");
	/* The window is the current slot and the one before it. */
	CHECK(res->duration_ns > 1 * NSEC_PER_SEC && res->duration_ns <= 2 * NSEC_PER_SEC);
	store_result__free(res);

	CHECK_EQ(query(st, PROFILE_CPU, 10, NULL, &res), 0);
	CHECK_EQ(res->nr_rows, 2);
	CHECK(find_row(res, 1, 1, "old", "app", d.a, 3));
	CHECK_EQ(find_row(res, 1, 1, "old", "app", d.a, 3)->values[0], 7);
	CHECK(find_row(res, 1, 1, "new", "app", d.a, 3));
	CHECK(res->duration_ns > 9 * NSEC_PER_SEC && res->duration_ns <= 10 * NSEC_PER_SEC);
	store_result__free(res);

	dsos__put(&d);
	store__free(st);
}

TEST(retention_bounds_queries_and_expire_drops_old_slots)
{
	struct store *st = new_store(10, 64 << 20);
	struct store_result *res = NULL;
	struct store_stats before, after;
	struct dsos d;
	uint64_t now = now_ns(), oldest;

	CHECK(st);
	CHECK_EQ(store__retention_ns(st), 10 * NSEC_PER_SEC);
	CHECK_EQ(dsos__init(&d), 0);
	/* Start early in a second so that the adds below stay within it. */
	while (now_ns() % NSEC_PER_SEC > NSEC_PER_SEC / 2)
		usleep(10000);
	now = now_ns();
	/* Older than the retention: refused at once, counted as too old. */
	CHECK_EQ(add(st, PROFILE_CPU, now - 15 * NSEC_PER_SEC, 1, 1, "ancient", "app", d.b, 3, 1,
		     0),
		 -ERANGE);
	store__stats(st, &before);
	CHECK_EQ(before.samples_too_old, 1);
	CHECK_EQ(before.rows, 0);

	/* The oldest second the retention still holds, and a recent one. */
	oldest = (now / NSEC_PER_SEC - 10) * NSEC_PER_SEC + NSEC_PER_SEC / 2;
	CHECK_EQ(add(st, PROFILE_CPU, oldest, 1, 1, "old", "app", d.b, 3, 1, 0), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now - 3 * NSEC_PER_SEC, 1, 1, "recent", "app", d.a, 3, 1, 0),
		 0);
	CHECK_EQ(query(st, PROFILE_CPU, 5, NULL, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_STR(res->rows[0].comm, "recent");
	store_result__free(res);

	store__stats(st, &before);
	CHECK_EQ(before.slots, 2);
	CHECK_EQ(before.rows, 2);
	CHECK_EQ(before.stacks, 2);
	/* Once the clock enters the next second, the oldest slot falls out of the retention. */
	while (now_ns() / NSEC_PER_SEC == now / NSEC_PER_SEC)
		usleep(10000);
	store__expire(st);
	store__stats(st, &after);
	CHECK_EQ(after.slots, 1);
	CHECK_EQ(after.rows, 1);
	CHECK_EQ(after.stacks, 1);
	CHECK_EQ(after.frames, 3);
	CHECK(after.bytes < before.bytes);
	/* Gone even for a query reaching back further than the retention. */
	CHECK_EQ(query_rows(st, 30, NULL), 1);
	/* Expiring again changes nothing. */
	store__expire(st);
	store__stats(st, &after);
	CHECK_EQ(after.slots, 1);
	CHECK_EQ(after.rows, 1);

	dsos__put(&d);
	store__free(st);
}

TEST(sample_for_a_recycled_slot_is_too_old)
{
	/* 10 s retention: 11 slots, so now and now - 11 s share one. */
	struct store *st = new_store(10, 64 << 20);
	struct store_stats stats;
	struct dsos d;
	uint64_t now = now_ns();

	CHECK(st);
	CHECK_EQ(dsos__init(&d), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 1, 1, "a", "app", d.a, 3, 1, 0), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now - 11 * NSEC_PER_SEC, 1, 1, "a", "app", d.a, 3, 1, 0),
		 -ERANGE);
	store__stats(st, &stats);
	CHECK_EQ(stats.samples_too_old, 1);
	CHECK_EQ(stats.samples_added, 1);
	CHECK_EQ(stats.samples_dropped_nomem, 0);
	CHECK_EQ(query_rows(st, 10, NULL), 1);

	dsos__put(&d);
	store__free(st);
}

static size_t count_pid(const struct store_result *res, uint32_t pid)
{
	size_t n = 0;

	for (size_t i = 0; i < res->nr_rows; i++)
		n += res->rows[i].pid == pid;
	return n;
}

TEST(filters_by_pid_and_comm)
{
	struct store *st = new_store(60, 64 << 20);
	struct store_result *res = NULL;
	uint32_t one[] = { 100 }, two[] = { 300, 100 }, none[] = { 999, 5 };
	struct store_filter f;
	struct dsos d;
	uint64_t now = now_ns();

	CHECK(st);
	CHECK_EQ(dsos__init(&d), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 100, 101, "worker", "server", d.a, 3, 1, 0), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 200, 200, "main", "client", d.a, 3, 1, 0), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now, 300, 301, "io", "server", d.b, 3, 1, 0), 0);
	CHECK_EQ(query_rows(st, 5, NULL), 3);

	f = (struct store_filter){ .pids = one, .nr_pids = 1 };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_EQ(res->rows[0].pid, 100);
	store_result__free(res);

	f = (struct store_filter){ .pids = two, .nr_pids = 2 };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 2);
	CHECK_EQ(count_pid(res, 100), 1);
	CHECK_EQ(count_pid(res, 300), 1);
	store_result__free(res);

	f = (struct store_filter){ .pids = none, .nr_pids = 2 };
	CHECK_EQ(query_rows(st, 5, &f), 0);

	/* A pid list with no entries means any pid. */
	f = (struct store_filter){ .pids = one, .nr_pids = 0 };
	CHECK_EQ(query_rows(st, 5, &f), 3);

	/* The thread name. */
	f = (struct store_filter){ .comm = "worker" };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_EQ(res->rows[0].pid, 100);
	store_result__free(res);

	f = (struct store_filter){ .comm = "main" };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_EQ(res->rows[0].pid, 200);
	store_result__free(res);

	/* The executable name, whatever the threads are called. */
	f = (struct store_filter){ .comm = "server" };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 2);
	CHECK_EQ(count_pid(res, 100), 1);
	CHECK_EQ(count_pid(res, 300), 1);
	store_result__free(res);

	f = (struct store_filter){ .comm = "client" };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_EQ(res->rows[0].pid, 200);
	store_result__free(res);

	/* Whole names only. */
	f = (struct store_filter){ .comm = "serv" };
	CHECK_EQ(query_rows(st, 5, &f), 0);
	f = (struct store_filter){ .comm = "nobody" };
	CHECK_EQ(query_rows(st, 5, &f), 0);

	/* Both conditions must hold. */
	f = (struct store_filter){ .pids = one, .nr_pids = 1, .comm = "main" };
	CHECK_EQ(query_rows(st, 5, &f), 0);
	f = (struct store_filter){ .pids = two, .nr_pids = 2, .comm = "io" };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_EQ(res->rows[0].pid, 300);
	store_result__free(res);

	dsos__put(&d);
	store__free(st);
}

/* Sleeps until CLOCK_MONOTONIC is past the second that `t` falls in. */
static void wait_past_second(uint64_t t)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	while (now_ns() / NSEC_PER_SEC <= t / NSEC_PER_SEC)
		nanosleep(&ts, NULL);
}

/* A sample inside a probed call is stored as taken and again labelled (probe, latency class):
 * queries see one or the other, never both. */
TEST(probe_labelled_copies_are_apart)
{
	struct store *st = new_store(60, 64 << 20);
	struct store_result *res = NULL;
	struct store_filter f;
	struct dsos d;
	uint64_t now = now_ns();
	struct sample s = {
		.type = PROFILE_CPU, .pid = 10, .tid = 10, .time_ns = now, .comm = "app",
		.exe = "app", .nr_frames = 3, .values = { 1, 100 },
	};

	CHECK(st);
	CHECK_EQ(dsos__init(&d), 0);
	s.frames = d.a;
	CHECK_EQ(store__add(st, &s), 0);
	CHECK_EQ(store__add(st, &s), 0);
	s.probe = 7;
	s.latency = STORE_LATENCY_SLOW;
	CHECK_EQ(store__add(st, &s), 0);
	s.latency = STORE_LATENCY_FAST;
	s.frames = d.b;
	CHECK_EQ(store__add(st, &s), 0);

	/* As taken: the two plain samples, in one row. */
	CHECK_EQ(query(st, PROFILE_CPU, 5, NULL, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_EQ(res->rows[0].values[0], 2);
	CHECK_EQ(res->rows[0].probe, 0);
	store_result__free(res);
	f = (struct store_filter){ .probe = 7 };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 2);
	for (size_t i = 0; i < res->nr_rows; i++)
		CHECK_EQ(res->rows[i].probe, 7);
	store_result__free(res);
	f.latency = STORE_LATENCY_SLOW;
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK_EQ(res->rows[0].latency, STORE_LATENCY_SLOW);
	CHECK(same_frames(&res->rows[0], d.a, 3));
	store_result__free(res);
	f.latency = STORE_LATENCY_FAST;
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 1);
	CHECK(same_frames(&res->rows[0], d.b, 3));
	store_result__free(res);
	f = (struct store_filter){ .probe = 8 };
	CHECK_EQ(query(st, PROFILE_CPU, 5, &f, &res), 0);
	CHECK_EQ(res->nr_rows, 0);
	store_result__free(res);
	store__free(st);
	dsos__put(&d);
}

TEST(references_are_released_and_results_outlive_expiry)
{
	unsigned long live0 = fake_dso__live();
	/* 2 s retention: a sample placed 2 s back is kept until the current second ends. */
	struct store *st = new_store(2, 64 << 20), *st2 = NULL;
	struct store_result *res = NULL;
	struct store_stats s0, s;
	const struct store_row *r;
	struct dsos d;
	uint64_t now;

	CHECK(st);
	store__stats(st, &s0);
	CHECK(s0.bytes > 0);
	CHECK_EQ(dsos__init(&d), 0);
	/* Far enough from the next second for the first store__expire to keep the samples. */
	if (now_ns() % NSEC_PER_SEC > NSEC_PER_SEC / 2)
		wait_past_second(now_ns());
	now = now_ns();
	CHECK_EQ(add(st, PROFILE_CPU, now - 2 * NSEC_PER_SEC, 1, 2, "a", "app", d.a, 3, 1, 0), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now - 2 * NSEC_PER_SEC, 1, 2, "a", "app", d.b, 3, 2, 0), 0);
	CHECK_EQ(add(st, PROFILE_CPU, now - 2 * NSEC_PER_SEC, 1, 3, "b", "other", d.rev, 3, 3, 0),
		 0);
	CHECK_EQ(add(st, PROFILE_CPU, now - 2 * NSEC_PER_SEC, 1, 3, "b", "other", d.rev, 3, 3, 0),
		 0);
	/* The store holds its own references: ours can go. */
	dsos__put(&d);
	CHECK_EQ(fake_dso__live(), live0 + 2);

	CHECK_EQ(query(st, PROFILE_CPU, 10, NULL, &res), 0);
	CHECK_EQ(res->nr_rows, 3);
	/* Not yet older than the retention. */
	store__expire(st);
	store__stats(st, &s);
	CHECK_EQ(s.slots, 1);
	CHECK_EQ(s.rows, 3);

	wait_past_second(now);
	store__expire(st);
	store__stats(st, &s);
	CHECK_EQ(s.slots, 0);
	CHECK_EQ(s.rows, 0);
	/* The result still holds its stacks, labels and dsos. */
	CHECK_EQ(s.stacks, 3);
	CHECK_EQ(s.frames, 9);
	CHECK_EQ(fake_dso__live(), live0 + 2);
	/*
	 * Objects of the same sizes in another store take the memory back if the first one freed
	 * what the result still uses: the checks below would then read them.
	 */
	st2 = new_store(60, 64 << 20);
	CHECK(st2);
	for (uint64_t i = 0; i < 8; i++) {
		struct frame junk[3] = { { NULL, i * 16 }, { NULL, i * 16 + 1 }, { NULL, i * 16 + 2 } };

		CHECK_EQ(add(st2, PROFILE_CPU, now_ns(), 9, 9 + i, "zz", "yyyyy", junk, 3, 1, 0), 0);
	}
	r = NULL;
	for (size_t i = 0; i < res->nr_rows; i++)
		if (res->rows[i].tid == 3)
			r = &res->rows[i];
	CHECK(r);
	CHECK_EQ(r->values[0], 6);
	CHECK_STR(r->comm, "b");
	CHECK_STR(r->exe, "other");
	CHECK_EQ(r->nr_frames, 3);
	CHECK_STR(dso__path(r->frames[0].dso), "/usr/bin/app");
	CHECK_EQ(r->frames[0].addr, 0x1000);
	CHECK_STR(dso__path(r->frames[2].dso), "/usr/lib/libc.so.6");
	CHECK_EQ(r->frames[2].addr, 0x500);
	CHECK_EQ(query_rows(st, 10, NULL), 0);

	store_result__free(res);
	store__stats(st, &s);
	CHECK_EQ(s.stacks, 0);
	CHECK_EQ(s.rows, 0);
	CHECK_EQ(s.frames, 0);
	CHECK_EQ(s.samples_added, 4);
	CHECK_EQ(fake_dso__live(), live0);
	/* What is left are the intern tables' buckets (1024 pointers each for stacks, labels). */
	CHECK(s.bytes >= s0.bytes);
	CHECK(s.bytes <= s0.bytes + 2 * 1024 * sizeof(void *));
	store__free(st);
	store__free(st2);
}

#define LIMIT	  (64 << 10)
/* Growth one add can cause past the check: a slot's row table doubling, plus a stack. */
#define SLACK	  (16 << 10)
#define SECONDS	  8
#define PER_SECOND 100

TEST(memory_limit_evicts_oldest_slots)
{
	unsigned long live0 = fake_dso__live();
	struct store *st = new_store(60, LIMIT);
	struct dso *dso = fake_dso__new(DSO_ELF, "/usr/bin/big", "");
	struct store_result *res = NULL;
	struct store_stats s;
	struct frame f[4];
	uint64_t now = now_ns(), max_bytes = 0;
	size_t per_sec[SECONDS] = { 0 };

	CHECK(st);
	CHECK(dso);
	for (int sec = SECONDS - 1; sec >= 0; sec--) {
		for (int i = 0; i < PER_SECOND; i++) {
			for (int k = 0; k < 4; k++)
				f[k] = (struct frame){ dso, (uint64_t)sec << 32 | i << 8 | k };
			CHECK_EQ(add(st, PROFILE_CPU, now - (uint64_t)sec * NSEC_PER_SEC, 7, 7,
				     "big", "big", f, 4, 1, (uint64_t)i),
				 0);
			store__stats(st, &s);
			if (s.bytes > max_bytes)
				max_bytes = s.bytes;
		}
	}
	store__stats(st, &s);
	CHECK(s.slots_evicted_memory > 0);
	CHECK(s.slots < SECONDS);
	CHECK_EQ(s.samples_dropped_nomem, 0);
	CHECK_EQ(s.samples_added, SECONDS * PER_SECOND);
	if (max_bytes > LIMIT + SLACK)
		FAILF("bytes reached %llu, limit %d", (unsigned long long)max_bytes, LIMIT);
	CHECK(max_bytes <= LIMIT + SLACK);

	/* The latest second is whole. */
	CHECK_EQ(query(st, PROFILE_CPU, 2, NULL, &res), 0);
	CHECK(res->nr_rows >= PER_SECOND);
	for (int i = 0; i < PER_SECOND; i++) {
		const struct store_row *r;

		for (int k = 0; k < 4; k++)
			f[k] = (struct frame){ dso, (uint64_t)i << 8 | k };
		r = find_row(res, 7, 7, "big", "big", f, 4);
		CHECK(r);
		CHECK_EQ(r->values[0], 1);
		CHECK_EQ(r->values[1], i);
	}
	store_result__free(res);

	/* Whole slots went, oldest first: what is left is the latest few seconds, complete. */
	CHECK_EQ(query(st, PROFILE_CPU, 60, NULL, &res), 0);
	CHECK(res->nr_rows < SECONDS * PER_SECOND);
	for (size_t i = 0; i < res->nr_rows; i++)
		per_sec[res->rows[i].frames[0].addr >> 32]++;
	store_result__free(res);
	for (int sec = 0; sec < SECONDS; sec++)
		CHECK(per_sec[sec] == 0 || per_sec[sec] == PER_SECOND);
	for (int sec = 1; sec < SECONDS; sec++)
		CHECK(!per_sec[sec] || per_sec[sec - 1]);

	dso__put(dso);
	store__free(st);
	CHECK_EQ(fake_dso__live(), live0);
}

TEST(samples_dropped_when_current_slot_alone_is_over)
{
	unsigned long live0 = fake_dso__live();
	struct store *st = new_store(60, 40 << 10);
	struct dso *dso = fake_dso__new(DSO_ELF, "/usr/bin/big", "");
	struct store_stats s;
	struct frame f[4];
	uint64_t now = now_ns(), max_bytes = 0;
	int dropped = 0, other = 0;

	CHECK(st);
	CHECK(dso);
	f[0] = (struct frame){ dso, 1 };
	CHECK_EQ(add(st, PROFILE_CPU, now - 3 * NSEC_PER_SEC, 7, 7, "old", "big", f, 1, 1, 0), 0);
	for (int i = 0; i < 1000; i++) {
		int err;

		for (int k = 0; k < 4; k++)
			f[k] = (struct frame){ dso, (uint64_t)i << 8 | k };
		err = add(st, PROFILE_CPU, now, 7, 7, "big", "big", f, 4, 1, 0);
		if (err == -ENOMEM)
			dropped++;
		else if (err)
			other++;
		store__stats(st, &s);
		if (s.bytes > max_bytes)
			max_bytes = s.bytes;
	}
	CHECK_EQ(other, 0);
	CHECK(dropped > 0);
	store__stats(st, &s);
	CHECK_EQ(s.samples_dropped_nomem, dropped);
	CHECK_EQ(s.samples_added, 1 + 1000 - dropped);
	/* The older slot went first. */
	CHECK_EQ(s.slots_evicted_memory, 1);
	CHECK_EQ(s.slots, 1);
	CHECK(max_bytes <= (40 << 10) + SLACK);
	CHECK_EQ(query_rows(st, 10, NULL), 1000 - dropped);

	dso__put(dso);
	store__free(st);
	CHECK_EQ(fake_dso__live(), live0);
}

TEST(period_is_reported)
{
	struct store *st = new_store(60, 64 << 20);
	struct store_result *res = NULL;

	CHECK(st);
	CHECK_EQ(query(st, PROFILE_CPU, 5, NULL, &res), 0);
	CHECK_EQ(res->period, 0);
	CHECK_EQ(res->nr_rows, 0);
	store_result__free(res);

	store__set_period(st, PROFILE_CPU, 10101010);
	CHECK_EQ(query(st, PROFILE_CPU, 5, NULL, &res), 0);
	CHECK_EQ(res->period, 10101010);
	store_result__free(res);
	/* Per type. */
	CHECK_EQ(query(st, OTHER_TYPE, 5, NULL, &res), 0);
	CHECK_EQ(res->period, 0);
	store_result__free(res);
	store__free(st);
}

TEST(where_compares_captured_values)
{
	const char *args = "len=4096\nr->id=-3\nptr=0x10\nbuf=optimized out";
	struct store_where w = {.name = "len", .op = STORE_WHERE_GT, .value = 4095};

	CHECK(store_where__matches(&w, args));
	w.value = 4096;
	CHECK(!store_where__matches(&w, args));
	w.op = STORE_WHERE_GE;
	CHECK(store_where__matches(&w, args));
	w = (struct store_where){.name = "r->id", .op = STORE_WHERE_LT, .value = 0};
	CHECK(store_where__matches(&w, args));
	w.op = STORE_WHERE_EQ;
	w.value = -3;
	CHECK(store_where__matches(&w, args));
	w = (struct store_where){.name = "ptr", .op = STORE_WHERE_EQ, .value = 16};
	CHECK(store_where__matches(&w, args));
	/* Not a number, a prefix of a name, no such name: nothing passes. */
	w = (struct store_where){.name = "buf", .op = STORE_WHERE_NE, .value = 0};
	CHECK(!store_where__matches(&w, args));
	w = (struct store_where){.name = "le", .op = STORE_WHERE_NE, .value = 0};
	CHECK(!store_where__matches(&w, args));
	w.name = "nosuch";
	CHECK(!store_where__matches(&w, args));
	CHECK(!store_where__matches(&w, ""));
}

int main(void)
{
	RUN(identical_samples_sum_into_one_row);
	RUN(different_labels_stacks_and_types_are_separate_rows);
	RUN(window_selects_whole_recent_slots);
	RUN(retention_bounds_queries_and_expire_drops_old_slots);
	RUN(sample_for_a_recycled_slot_is_too_old);
	RUN(filters_by_pid_and_comm);
	RUN(probe_labelled_copies_are_apart);
	RUN(references_are_released_and_results_outlive_expiry);
	RUN(memory_limit_evicts_oldest_slots);
	RUN(samples_dropped_when_current_slot_alone_is_over);
	RUN(period_is_reported);
	RUN(where_compares_captured_values);
	return test_summary();
}
