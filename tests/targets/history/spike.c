// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program that came and went: it idles in idle_fn, then spins in spike_fn for SECONDS
 * (argument, default 5), then idles again. It prints its pid, then at each change a line
 * "PHASE UNIXTIME" (CLOCK_REALTIME seconds, fractional): "spike" when spike_fn starts, "idle"
 * when it ends. A line on stdin (or EOF) starts the spike; a second one ends the program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "target.h"

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long spike_fn(double seconds)
{
	double end = now() + seconds;
	volatile unsigned long n = 0;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			n += i;
	return n;
}

__attribute__((noinline)) void idle_fn(void)
{
	char line[16];

	/* Off the CPU until told: no sample of it. */
	if (!fgets(line, sizeof(line), stdin))
		return;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;

	target_start(false);
	idle_fn();
	printf("spike %.3f\n", wall());
	fflush(stdout);
	spike_fn(seconds);
	printf("idle %.3f\n", wall());
	fflush(stdout);
	idle_fn();
	return 0;
}
