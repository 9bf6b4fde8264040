// SPDX-License-Identifier: GPL-2.0-only
/*
 * One leaf and its one caller reached from three different stacks, each in a thread of its
 * own, named for it:
 *   br_a: br_leaf → br_mid → br_a → br_run → start_thread → clone3
 *   br_b: br_leaf → br_mid → br_b → br_run → ...
 *   br_c: br_leaf → br_mid → br_a → br_c → br_run → ...
 * Every sample of br_leaf has the same return address into br_mid, which is what autoprof's
 * walk cache files a process's stacks under: an entry holds one stack at a time, and a walk
 * must notice where its stack leaves the cached one (at br_mid's caller, or at br_a's) rather
 * than follow the cached frames; the thread's name says which stack is the truth. Built
 * -fomit-frame-pointer with frames like uw_c's (every callee-saved register in use, rbp among
 * them), so that only the tables find the callers.
 *   uw_branch SECONDS
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>

#include "uw_common.h"

static volatile uint64_t sink;

UW_NOINLINE uint64_t br_leaf(uint64_t seed)
{
	uint64_t x = seed;

	UW_SPIN(x, 1000000); /* HOT */
	return x;
}

/* Six values live across the call (rbx, rbp, r12–r15 saved) and a buffer below rsp. */
#define BR_FRAME(name, call)                                                               \
	UW_NOINLINE uint64_t name(uint64_t a)                                              \
	{                                                                                  \
		uint64_t buf[8];                                                           \
		uint64_t v0 = a * 3, v1 = a ^ 0x55, v2 = a + 11, v3 = a * 7, v4 = a >> 3, \
			 v5 = a - 1, r;                                                    \
                                                                                           \
		for (int i = 0; i < 8; i++)                                                \
			buf[i] = a + i;                                                    \
		asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4), "+r"(v5) \
			     : "r"(buf)                                                    \
			     : "memory");                                                  \
		r = call(a);                                                               \
		asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4), "+r"(v5) \
			     :                                                             \
			     : "memory");                                                  \
		return r + v0 * v1 + v2 * v3 + v4 * v5 + buf[r & 7];                      \
	}

BR_FRAME(br_mid, br_leaf)
BR_FRAME(br_a, br_mid)
BR_FRAME(br_b, br_mid)
BR_FRAME(br_c, br_a)

static double end;

static void *br_run(void *arg)
{
	uint64_t (*fn)(uint64_t) = arg;
	uint64_t x = (uint64_t)(uintptr_t)&x;

	while (uw_now() < end) {
		x = fn(x);
		UW_BARRIER();
	}
	sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		uint64_t (*fn)(uint64_t);
	} branches[] = { { "br_a", br_a }, { "br_b", br_b }, { "br_c", br_c } };
	pthread_t t[3];

	end = uw_start(argc, argv);
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&t[i], NULL, br_run, (void *)branches[i].fn))
			return 1;
		pthread_setname_np(t[i], branches[i].name);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
