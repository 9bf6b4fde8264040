// SPDX-License-Identifier: GPL-2.0-only
/*
 * Captured variables for the probe tests (tests/integration/test_capture.py), built at -O0 and
 * at -O2 -g: handle(r, len) burns about len microseconds of CPU, so its latency grows with
 * len. Prints its pid, then reads commands from stdin: "run N" makes N calls, each three of
 * them with len 100, 400 and 1600 in a random order, r->id counting up, and prints "total=T"
 * for each call (the local the line probe captures) and then "done"; "quit" or end of input
 * exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct req {
	unsigned long id;
	int kind;
	const char *name;
};

static volatile unsigned long sink;
/* Calls of handle so far: a variable of static storage to capture. */
volatile unsigned long handled;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void burn(unsigned long us)
{
	unsigned long long end = now_ns() + us * 1000ULL;

	while (now_ns() < end)
		for (int i = 0; i < 100; i++)
			sink += i;
}

/* Takes its argument's value out of the caller's hands. */
__attribute__((noinline)) void note(unsigned long v)
{
	sink ^= v;
}

__attribute__((noinline)) unsigned long handle(struct req *r, unsigned long len)
{
	unsigned long total = r->id * 3 + len;
	unsigned long twice = len * 2;

	handled++;
	note(twice);
	note((unsigned long)r->kind);
	burn(len);
	sink += total; /* CAPTURE_LINE: total is live here, twice is not (at -O2) */
	return total;
}

/* A random permutation of order[3] (xorshift: no libc state shared with anything). */
static void shuffle(int *order)
{
	static unsigned long x = 88172645463325252UL;

	for (int i = 2; i > 0; i--) {
		int j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (int)(x % (unsigned long)(i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

int main(void)
{
	static const unsigned long lens[3] = {100, 400, 1600};
	int order[3] = {0, 1, 2};
	char line[64];
	unsigned long id = 0;

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		long n;

		if (!strncmp(line, "quit", 4))
			break;
		if (sscanf(line, "run %ld", &n) != 1 || n < 1)
			continue;
		for (long k = 0; k < n; k++) {
			struct req r = {.id = id++, .kind = (int)(k % 3), .name = "req"};

			/* Each three calls take the three lengths in a random order: a fixed order
			 * makes a periodic loop that the sampler's periodic timer can alias with
			 * (seen: no sample in any 100 us call of 3,000). */
			if (k % 3 == 0)
				shuffle(order);
			printf("total=%lu\n", handle(&r, lens[order[k % 3]]));
		}
		printf("done\n");
		fflush(stdout);
	}
	return 0;
}
