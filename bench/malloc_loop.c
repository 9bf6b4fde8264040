// SPDX-License-Identifier: GPL-2.0-only
/*
 * Allocation-heavy loop for bench/memory.sh: N malloc/free pairs of mixed sizes, with 64 blocks
 * kept live so frees are not always of the block just allocated. Prints its pid, waits for a
 * line on stdin (so probes can be attached first), runs, prints "ns_per_pair X": the thread's
 * CPU time (user and system, so probe handlers count) per pair, not wall time, which on a shared
 * machine counts time other processes held the CPU.
 *   malloc_loop N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

#define LIVE 64

static const size_t sizes[] = { 16, 48, 256, 64, 1024, 32, 4096, 128, 24, 512, 80, 2048 };

void *volatile sink;

__attribute__((noinline)) static void *alloc_one(size_t n)
{
	char *p = malloc(n);

	p[0] = 1;
	return p;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	void *live[LIVE] = { 0 };
	struct timespec a, b;

	if (!loop_ready())
		return 1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++) {
		free(live[i % LIVE]);
		live[i % LIVE] = alloc_one(sizes[i % (sizeof(sizes) / sizeof(sizes[0]))]);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	sink = live[0];
	loop_report("ns_per_pair", &a, &b, n);
	return 0;
}
