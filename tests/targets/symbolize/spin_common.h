// SPDX-License-Identifier: GPL-2.0-only
/* Shared by the C targets of tests/integration/test_symbolize.py: print the pid, then spin
 * until SECONDS (argv[1], default 2) have passed. */
#ifndef SPIN_COMMON_H
#define SPIN_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double spin_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double spin_start(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;

	printf("%d\n", (int)getpid());
	fflush(stdout);
	return spin_now() + secs;
}
#endif
