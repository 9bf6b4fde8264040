// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spins at the bottom of a 200-deep recursion: its stacks are deeper than the BPF walk (127 user
 * frames), so samples must carry 127 frames and count as truncated.
 *   deep_stack SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "target.h"

static volatile unsigned long sink;

__attribute__((noinline)) void spin_at_bottom(double secs)
{
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink += i;
}

__attribute__((noinline)) void recurse(int depth, double secs)
{
	if (depth == 0)
		spin_at_bottom(secs);
	else
		recurse(depth - 1, secs);
	sink++; /* not a tail call */
}

int main(int argc, char **argv)
{
	printf("%d\n", (int)getpid());
	fflush(stdout);
	recurse(200, argc > 1 ? atof(argv[1]) : 2);
	return 0;
}
