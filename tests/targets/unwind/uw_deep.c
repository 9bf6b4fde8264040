// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two threads spin at the bottom of deep_rec recursions, -fomit-frame-pointer:
 *   - the main thread (tid = pid, named uw_deep300) at depth 300, deeper than the 127 frames a
 *     sample holds: its stacks must end in [truncated] after >= 100 deep_rec frames;
 *   - a second thread (named uw_deep60) at depth 60: more frames than one BPF program
 *     invocation walks, but fewer than a sample holds: its stacks must be complete, down to
 *     start_thread and clone3.
 *   uw_deep SECONDS
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>

#include "uw_common.h"

static volatile uint64_t sink;

UW_NOINLINE uint64_t deep_leaf(double end)
{
	uint64_t x = sink;

	while (uw_now() < end)
		UW_SPIN(x, 100000); /* HOT */
	return x;
}

/* A frame of its own per level: buf and the values kept across the call. */
UW_NOINLINE uint64_t deep_rec(int n, double end)
{
	uint64_t buf[4] = {(uint64_t)n, sink, 3, 4};
	uint64_t keep = (uint64_t)n * 7, r;

	asm volatile("" : "+r"(keep) : "r"(buf) : "memory");
	r = n > 0 ? deep_rec(n - 1, end) : deep_leaf(end);
	UW_BARRIER();
	return r + keep + buf[r & 3];
}

static void *thread60(void *arg)
{
	sink += deep_rec(60, *(double *)arg);
	UW_BARRIER();
	return NULL;
}

int main(int argc, char **argv)
{
	double end = uw_start(argc, argv);
	pthread_t t;

	pthread_setname_np(pthread_self(), "uw_deep300");
	if (pthread_create(&t, NULL, thread60, &end))
		return 1;
	pthread_setname_np(t, "uw_deep60");
	sink += deep_rec(300, end);
	UW_BARRIER();
	pthread_join(t, NULL);
	return 0;
}
