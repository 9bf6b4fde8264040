// SPDX-License-Identifier: GPL-2.0-only
/* Spins in a static function: built stripped with a .gnu_debuglink debug file beside it, and
 * stripped with MiniDebugInfo, neither binary has the local symbol in its own tables.
 *   sym_debuglink|sym_minidebug SECONDS */
#include <stdint.h>

#include "spin_common.h"

static volatile uint64_t sink;

static __attribute__((noinline)) void local_spin(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + (i | 1); /* LOCAL_SPIN */
	sink = x;
}

int main(int argc, char **argv)
{
	double end = spin_start(argc, argv);

	while (spin_now() < end)
		local_spin(1000000);
	return 0;
}
