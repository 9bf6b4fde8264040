// SPDX-License-Identifier: GPL-2.0-only
/* Spends its time in libc's memset (an internal, local symbol such as __memset_avx2_unaligned_erms)
 * called (through fill) from main, which libc's local __libc_start_call_main calls.
 *   sym_libc SECONDS */
#include <string.h>

#include "spin_common.h"

static char buf[1 << 20];

/* memset keeps no frame pointer: a frame-pointer walk from inside it skips fill, its caller, and
 * goes on at main. */
__attribute__((noinline)) void fill(int c)
{
	memset(buf, c, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
}

int main(int argc, char **argv)
{
	double end = spin_start(argc, argv);

	while (spin_now() < end)
		for (int i = 0; i < 64; i++)
			fill(i);
	return 0;
}
