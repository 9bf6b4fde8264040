// SPDX-License-Identifier: GPL-2.0-only
/* A forced-inline callee inside a never-inlined function that spins: the profile must show the
 * inlined function as its own frame, with its own line. The tests find the lines by the marker
 * comments.
 *   sym_inline SECONDS */
#include <stdint.h>

#include "spin_common.h"

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t inlined_spin(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + (i | 1); /* INLINE_SPIN */
	return x;
}

__attribute__((noinline)) void outer_spin(uint64_t n)
{
	uint64_t x = inlined_spin(sink, n); /* CALL_INLINE */

	sink = x;
}

int main(int argc, char **argv)
{
	double end = spin_start(argc, argv);

	while (spin_now() < end)
		outer_spin(1000000); /* CALL_OUTER */
	return 0;
}
