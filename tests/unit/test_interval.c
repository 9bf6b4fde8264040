/* DEPS: src/sample/interval.c */
// SPDX-License-Identifier: GPL-2.0-only
/* Off-CPU spans cut at whole seconds: parts add up to the span, the count goes to the last. */
#include <stdbool.h>

#include "lib/timeconst.h"
#include "src/sample/interval.h"
#include "testlib.h"

struct parts {
	unsigned int n, lasts;
	uint64_t start[16], ns[16];
	bool last[16];
	int stop_at; /* fn returns -1 at this part, 0: never */
};

static int collect_part(void *arg, uint64_t start_ns, uint64_t ns, bool last)
{
	struct parts *p = arg;

	if (p->n >= 16)
		return -E2BIG;
	p->start[p->n] = start_ns;
	p->ns[p->n] = ns;
	p->last[p->n] = last;
	p->lasts += last;
	p->n++;
	return p->stop_at && (int)p->n == p->stop_at ? -1 : 0;
}

TEST(inside_one_second)
{
	struct parts p = { 0 };

	CHECK_EQ(interval__split(5 * NSEC_PER_SEC + 100, 5 * NSEC_PER_SEC + 900, 0, collect_part,
				 &p),
		 0);
	CHECK_EQ(p.n, 1u);
	CHECK_EQ(p.start[0], 5 * NSEC_PER_SEC + 100);
	CHECK_EQ(p.ns[0], 800ull);
	CHECK(p.last[0]);
}

TEST(across_seconds_adds_up)
{
	uint64_t start = 7 * NSEC_PER_SEC + 250000000, end = 10 * NSEC_PER_SEC + 400000000, sum = 0;
	struct parts p = { 0 };

	CHECK_EQ(interval__split(start, end, 0, collect_part, &p), 0);
	CHECK_EQ(p.n, 4u);
	CHECK_EQ(p.ns[0], 750000000ull);
	CHECK_EQ(p.ns[1], NSEC_PER_SEC);
	CHECK_EQ(p.ns[2], NSEC_PER_SEC);
	CHECK_EQ(p.ns[3], 400000000ull);
	/* Each part starts in the second it belongs to. */
	for (unsigned int i = 0; i < p.n; i++) {
		CHECK_EQ(p.start[i] / NSEC_PER_SEC, 7 + i);
		sum += p.ns[i];
	}
	CHECK_EQ(sum, end - start);
	CHECK_EQ(p.lasts, 1u);
	CHECK(p.last[3]);
}

TEST(ends_on_a_second_boundary)
{
	struct parts p = { 0 };

	CHECK_EQ(interval__split(3 * NSEC_PER_SEC + 500000000, 5 * NSEC_PER_SEC, 0, collect_part,
				 &p),
		 0);
	CHECK_EQ(p.n, 2u);
	CHECK_EQ(p.start[1], 4 * NSEC_PER_SEC);
	CHECK_EQ(p.ns[1], NSEC_PER_SEC);
	CHECK(p.last[1]);
}

TEST(floor_drops_older_parts)
{
	struct parts p = { 0 };

	CHECK_EQ(interval__split(1 * NSEC_PER_SEC + 5, 4 * NSEC_PER_SEC + 7, 3 * NSEC_PER_SEC,
				 collect_part, &p),
		 0);
	CHECK_EQ(p.n, 2u);
	CHECK_EQ(p.start[0], 3 * NSEC_PER_SEC);
	CHECK_EQ(p.ns[0], NSEC_PER_SEC);
	CHECK_EQ(p.ns[1], 7ull);
	CHECK(p.last[1]);
	/* Entirely older than the floor: nothing. */
	p = (struct parts){ 0 };
	CHECK_EQ(interval__split(1 * NSEC_PER_SEC, 2 * NSEC_PER_SEC, 3 * NSEC_PER_SEC,
				 collect_part, &p),
		 0);
	CHECK_EQ(p.n, 0u);
}

TEST(empty_span_is_counted_once)
{
	struct parts p = { 0 };

	CHECK_EQ(interval__split(9 * NSEC_PER_SEC, 9 * NSEC_PER_SEC, 0, collect_part, &p), 0);
	CHECK_EQ(p.n, 1u);
	CHECK_EQ(p.ns[0], 0ull);
	CHECK(p.last[0]);
}

TEST(callback_error_stops)
{
	struct parts p = { .stop_at = 2 };

	CHECK_EQ(interval__split(0, 5 * NSEC_PER_SEC, 0, collect_part, &p), -1);
	CHECK_EQ(p.n, 2u);
}

int main(void)
{
	RUN(inside_one_second);
	RUN(across_seconds_adds_up);
	RUN(ends_on_a_second_boundary);
	RUN(floor_drops_older_parts);
	RUN(empty_span_is_counted_once);
	RUN(callback_error_stops);
	return test_summary();
}
