/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_TARGET_H
#define AUTOPROF_TARGET_H

/*
 * What the test targets share around their main loop. The loop itself stays in each main: the
 * tests check stacks that end in main (e.g. churn's caller is main). static inline, so that a
 * target not using one of them does not warn; the targets are built with -fno-inline, so each
 * is a function of its own, as it was in every file.
 */
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Prints the pid; with wait, returns once a line came on stdin (a test starts the target's work
 * when the profiler is attached). False when stdin ended first.
 */
static inline bool target_start(bool wait)
{
	char line[16];

	printf("%d\n", getpid());
	fflush(stdout);
	return !wait || fgets(line, sizeof(line), stdin);
}

/* Prints the true leaked total ("leaked N"), then lives linger more seconds to be asked about. */
static inline void target_finish(unsigned long leaked, double linger)
{
	printf("leaked %lu\n", leaked);
	fflush(stdout);
	usleep((useconds_t)(linger * 1e6));
}

#endif
