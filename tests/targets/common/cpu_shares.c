// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spends 60 % / 30 % / 10 % of its CPU time in hot_60 / hot_30 / hot_10, all called from
 * dispatch(). Each round picks a function with those odds and a random work length, so the
 * program does not beat in step with a sampling period.
 *   cpu_shares SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "target.h"

static volatile uint64_t sink;

/* The same loop in each function, so the same length costs the same time in each. */
#define SPIN(n)                                                                          \
	do {                                                                                 \
		uint64_t x = sink;                                                           \
		for (uint64_t i = 0; i < (n); i++)                                           \
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;             \
		sink = x;                                                                    \
	} while (0)

__attribute__((noinline)) void hot_60(uint64_t n)
{
	SPIN(n);
}

__attribute__((noinline)) void hot_30(uint64_t n)
{
	SPIN(n);
}

__attribute__((noinline)) void hot_10(uint64_t n)
{
	SPIN(n);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

__attribute__((noinline)) void dispatch(uint64_t *rng)
{
	uint64_t pick = xorshift(rng) % 100;
	/* 20k..60k iterations: tens of microseconds, never a multiple of the 10 ms period. */
	uint64_t n = 20000 + xorshift(rng) % 40000;

	if (pick < 60)
		hot_60(n);
	else if (pick < 90)
		hot_30(n);
	else
		hot_10(n);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	double end = now() + secs;
	uint64_t rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)time(NULL);

	printf("%d\n", (int)getpid());
	fflush(stdout);
	while (now() < end)
		for (int i = 0; i < 64; i++)
			dispatch(&rng);
	return 0;
}
