// SPDX-License-Identifier: GPL-2.0-only
/* Spins in a static function: built stripped with a .gnu_debuglink debug file beside it, and
 * stripped with MiniDebugInfo, neither binary has the local symbol in its own tables.
 *   sym_debuglink|sym_minidebug SECONDS */
#include <stdint.h>

#include "spin_common.h"

static volatile uint64_t sink;

#ifdef MINIDEBUG
/* Makes this build's GNU build ID differ from sym_debuglink's: the daemon shares files by build
 * ID, and sym_minidebug must be read from its own .gnu_debugdata, not sym_debuglink's debug file. */
__attribute__((used)) static const char variant[] = "minidebug";
#endif

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
