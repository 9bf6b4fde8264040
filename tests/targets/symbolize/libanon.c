// SPDX-License-Identifier: GPL-2.0-only
/* libanon.so, stripped of every symbol table: the spinning function is hidden (in no table at
 * all), reached through the pointer that the one exported function returns. It comes right after
 * that function, so a symbolizer that ignored symbol sizes would misname it anon_get_spinner. */
#include <stdint.h>

static volatile uint64_t sink;

void anon_spin(uint64_t n);

void (*anon_get_spinner(void))(uint64_t)
{
	return anon_spin;
}

__attribute__((visibility("hidden"), noinline)) void anon_spin(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + (i | 1);
	sink = x;
}
