// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frame pointers everywhere but in the leaf: GCC 12 sets up no frame in a function that calls
 * nothing, even with -fno-omit-frame-pointer. In fp_hot_a, rbp is still fp_dispatch's frame,
 * whose return address leads to main: a frame-pointer walk reads fp_hot_a → main and loses
 * fp_dispatch; the CFI says fp_hot_a's return address is at rsp.
 *   uw_fpleaf SECONDS
 */
#include "uw_common.h"

static volatile uint64_t sink;

UW_NOINLINE uint64_t fp_hot_a(uint64_t x)
{
	UW_SPIN(x, 1000000); /* HOT */
	return x;
}

UW_NOINLINE uint64_t fp_dispatch(uint64_t a)
{
	uint64_t keep = a * 3;
	uint64_t r;

	asm volatile("" : "+r"(keep));
	r = fp_hot_a(a);
	UW_BARRIER();
	return r ^ keep;
}

int main(int argc, char **argv)
{
	double end = uw_start(argc, argv);
	uint64_t x = (uint64_t)getpid();

	while (uw_now() < end) {
		x = fp_dispatch(x);
		UW_BARRIER();
	}
	sink = x;
	return 0;
}
