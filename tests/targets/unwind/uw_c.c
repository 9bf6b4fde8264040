// SPDX-License-Identifier: GPL-2.0-only
/*
 * main → uw_level1 → uw_level2 → uw_leaf, built -fomit-frame-pointer: uw_level1 and uw_level2
 * keep six values live across their call, so they save every callee-saved register (rbp
 * among them, then used as a plain register) and address a stack buffer through rsp. Only the
 * CFI in .eh_frame says where their callers' frames are; a frame-pointer walk from uw_leaf
 * reads rbp as a frame and loses the chain.
 *   uw_c SECONDS
 */
#include "uw_common.h"

static volatile uint64_t sink;

UW_NOINLINE uint64_t uw_leaf(uint64_t seed)
{
	uint64_t x = seed;

	UW_SPIN(x, 1000000); /* HOT */
	return x;
}

/* Six values live across the call need rbx, rbp and r12–r15, which the function saves and
 * restores; buf needs a sub from rsp. The asm makes the values opaque (nothing to recompute
 * after the call) and keeps the call a call. */
UW_NOINLINE uint64_t uw_level2(uint64_t a)
{
	uint64_t buf[8];
	uint64_t v0 = a * 3, v1 = a ^ 0x55, v2 = a + 11, v3 = a * 7, v4 = a >> 3, v5 = a - 1, r;

	for (int i = 0; i < 8; i++)
		buf[i] = a + i;
	asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4), "+r"(v5) : "r"(buf)
		     : "memory");
	r = uw_leaf(a);
	asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4), "+r"(v5) : : "memory");
	return r + v0 * v1 + v2 * v3 + v4 * v5 + buf[r & 7];
}

/* The same frame shape one level up: two such frames between the leaf and main. */
UW_NOINLINE uint64_t uw_level1(uint64_t a)
{
	uint64_t buf[8];
	uint64_t v0 = a * 5, v1 = a ^ 0xaa, v2 = a + 13, v3 = a * 9, v4 = a >> 5, v5 = a - 3, r;

	for (int i = 0; i < 8; i++)
		buf[i] = a - i;
	asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4), "+r"(v5) : "r"(buf)
		     : "memory");
	r = uw_level2(a);
	asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4), "+r"(v5) : : "memory");
	return r + v0 * v1 + v2 * v3 + v4 * v5 + buf[r & 7];
}

int main(int argc, char **argv)
{
	double end = uw_start(argc, argv);
	uint64_t x = (uint64_t)getpid();

	while (uw_now() < end) {
		x = uw_level1(x);
		UW_BARRIER();
	}
	sink = x;
	return 0;
}
