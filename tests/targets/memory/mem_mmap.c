// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory profiling target for anonymous mappings: map_leak() maps 256 KiB every 10 ms and keeps
 * it, map_churn() maps and unmaps 256 KiB 4 times per 10 ms; malloc_big() mallocs and frees
 * 1 MiB (glibc maps it itself: counted once, as a malloc). Prints its pid, waits for a line on
 * stdin, then after SECONDS its true leaked total ("leaked N"), then lives LINGER more seconds.
 *   mem_mmap SECONDS [LINGER]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "target.h"

#define MAP_SIZE (256 * 1024)

void *volatile sink;
static unsigned long leaked;

/* A macro, not a function: each caller is the function that maps (-fno-inline). */
#define MAP() mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)

__attribute__((noinline)) void map_leak(void)
{
	char *p = MAP();

	if (p == MAP_FAILED)
		exit(1);
	p[0] = 1;
	sink = p;
	leaked += MAP_SIZE;
}

__attribute__((noinline)) void map_churn(void)
{
	for (int i = 0; i < 4; i++) {
		char *p = MAP();

		if (p == MAP_FAILED)
			exit(1);
		p[0] = 1;
		sink = p;
		munmap(p, MAP_SIZE);
	}
}

__attribute__((noinline)) void malloc_big(void)
{
	char *p = malloc(1 << 20);

	p[0] = 1;
	sink = p;
	free(p);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, linger = argc > 2 ? atof(argv[2]) : 0;
	double end;

	if (!target_start(true))
		return 1;
	end = now() + secs;
	while (now() < end) {
		map_leak();
		map_churn();
		malloc_big();
		usleep(10000);
	}
	target_finish(leaked, linger);
	return 0;
}
