// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory profiling target: leak_64k() leaks 64 KiB every 10 ms, churn() allocates and frees
 * 256-byte blocks 200 times per 10 ms. Prints its pid, then after SECONDS its true leaked
 * total ("leaked N"), then lives LINGER more seconds so its live set can be asked about. With
 * "wait", it waits for a line on stdin after printing its pid (so a test starts it once the
 * profiler attached: what it allocates before that is invisible). It allocates as a thread
 * named "leaker" (a sample's comm label is its thread's name, not the executable's). Built as
 * C++ too (build/memtargets/mem_leak_cxx), where the blocks come from new[] and go to delete[]
 * (operator new calls malloc) and the functions keep their C names.
 *   mem_leak SECONDS [LINGER [wait]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "target.h"

#ifdef __cplusplus
#define EXPORT	   extern "C"
#define ALLOC(n)   (new char[n])
#define RELEASE(p) (delete[] (char *)(p))
#else
#define EXPORT
#define ALLOC(n)   ((char *)malloc(n))
#define RELEASE(p) free(p)
#endif

/* The compiler must not drop an allocation it can prove unused. */
void *volatile sink;
static unsigned long leaked;

EXPORT __attribute__((noinline)) void leak_64k(void)
{
	char *p = ALLOC(64 * 1024);

	memset(p, 1, 64);
	sink = p;
	leaked += 64 * 1024;
}

EXPORT __attribute__((noinline)) void churn(void)
{
	for (int i = 0; i < 200; i++) {
		char *p = ALLOC(256);

		memset(p, i, 16);
		sink = p;
		RELEASE(sink);
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, linger = argc > 2 ? atof(argv[2]) : 0;
	double end;

	/*
	 * Named first: target_start() prints through stdio, which allocates, and that allocation
	 * must carry the same thread name as the rest (memory targets match the executable's
	 * name, not the thread's, so the rename does not hide the process).
	 */
	prctl(PR_SET_NAME, "leaker");
	if (!target_start(argc > 3 && !strcmp(argv[3], "wait")))
		return 1;
	end = now() + secs;
	while (now() < end) {
		leak_64k();
		churn();
		usleep(10000);
	}
	target_finish(leaked, linger);
	return 0;
}
