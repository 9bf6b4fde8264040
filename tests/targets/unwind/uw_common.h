// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared by the C targets of tests/integration/test_unwind.py: print the pid (flushed, the test
 * reads it before anything else), then work until SECONDS (argv[1], default 5) have passed.
 * The work is a multiply chain: no memory traffic, no calls, so nearly every sample of a hot
 * function lands in its own body and not in a prologue, an epilogue or the vDSO.
 */
#ifndef UW_COMMON_H
#define UW_COMMON_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Out of line, and opaque to its callers: without noipa, GCC's IPA register allocation sees
 * which registers a same-file callee leaves alone and keeps the caller's values in them rather
 * than in callee-saved registers that its frame must save (the CFI this test is about). */
#define UW_NOINLINE __attribute__((noinline, noipa))

/* An empty asm after a call: the call cannot become a jump (no sibling call), and the compiler
 * must assume memory changed, so the caller's frame stays live across it. */
#define UW_BARRIER() asm volatile("" ::: "memory")

/* About 0.1 ms per 100000 rounds: long against a call, short against the 10 ms period. */
#define UW_SPIN(x, n)                                                                      \
	do {                                                                               \
		for (uint64_t i_ = 0; i_ < (n); i_++) {                                    \
			(x) = (x) * 6364136223846793005ULL + 1442695040888963407ULL;       \
			asm volatile("" : "+r"(x));                                        \
		}                                                                          \
	} while (0)

static inline double uw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Prints the pid; returns the time at which to stop. */
static inline double uw_start(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;

	printf("%d\n", (int)getpid());
	fflush(stdout);
	return uw_now() + secs;
}
#endif
