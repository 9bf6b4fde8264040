/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BENCH_LOOP_H
#define AUTOPROF_BENCH_LOOP_H

/*
 * What the timed loops (call_loop.c, malloc_loop.c) share around their loop: a bench script
 * starts one, reads its pid, attaches its probes, then sends a line to start it; the loop is
 * timed with each program's own clock and reported as "LABEL X", ns per iteration. The clock
 * reads stay in each main, right around its loop, so these add nothing to what is timed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* Prints the pid and waits for a line on stdin. False when stdin ended first. */
static inline bool loop_ready(void)
{
	char line[16];

	printf("%d\n", getpid());
	fflush(stdout);
	return fgets(line, sizeof(line), stdin);
}

/* Prints "LABEL X": nanoseconds from a to b per one of n iterations. */
static inline void loop_report(const char *label, const struct timespec *a,
			       const struct timespec *b, long n)
{
	printf("%s %.1f\n", label, ((b->tv_sec - a->tv_sec) * 1e9 + (b->tv_nsec - a->tv_nsec)) / n);
}

#endif
