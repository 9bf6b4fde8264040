// SPDX-License-Identifier: GPL-2.0-only
/*
 * A request handler for the latency probe tests: handle() does fast_work() (about FAST_US of
 * CPU) and, every EVERY-th call, slow_path() as well (about SLOW_US more). Prints its pid, then
 * reads commands from stdin: "run N" makes N calls and prints "done calls=N slow=M p50=NS
 * p90=NS p95=NS p99=NS" (M: how many took the slow branch; the quantiles of the calls' durations
 * as the program itself timed them, nearest rank); "quit" or end of input exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long fast_us = 200, slow_us = 2000, every = 10;
static volatile unsigned long sink;
unsigned long slow_calls;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* On the CPU for us microseconds. */
__attribute__((noinline)) static void burn(long us)
{
	unsigned long long end = now_ns() + us * 1000ULL;

	while (now_ns() < end)
		for (int i = 0; i < 200; i++)
			sink += i;
}

__attribute__((noinline)) void fast_work(void)
{
	burn(fast_us);
}

__attribute__((noinline)) void slow_path(void)
{
	burn(slow_us);
}

__attribute__((noinline)) void handle(long i)
{
	fast_work();
	if (i % every == every - 1) {
		slow_calls++; /* PROBE_LINE: the slow branch */
		slow_path();
	}
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank q-quantile of n sorted values. */
static unsigned long long rank(const unsigned long long *v, long n, double q)
{
	long r = (long)(q * n + 0.999999);

	return v[(r < 1 ? 1 : r > n ? n : r) - 1];
}

int main(int argc, char **argv)
{
	char line[64];
	long i = 0;

	if (argc > 1)
		fast_us = atol(argv[1]);
	if (argc > 2)
		slow_us = atol(argv[2]);
	if (argc > 3)
		every = atol(argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		long n;
		unsigned long before = slow_calls;
		unsigned long long *durs;

		if (!strncmp(line, "quit", 4))
			break;
		if (sscanf(line, "run %ld", &n) != 1 || n < 1 || !(durs = malloc(n * sizeof(*durs))))
			continue;
		for (long k = 0; k < n; k++) {
			unsigned long long t0 = now_ns();

			handle(i++);
			durs[k] = now_ns() - t0;
		}
		qsort(durs, n, sizeof(*durs), cmp_ull);
		printf("done calls=%ld slow=%lu p50=%llu p90=%llu p95=%llu p99=%llu\n", n,
		       slow_calls - before, rank(durs, n, 0.5), rank(durs, n, 0.9),
		       rank(durs, n, 0.95), rank(durs, n, 0.99));
		free(durs);
	}
	return 0;
}
