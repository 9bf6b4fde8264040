// SPDX-License-Identifier: GPL-2.0-only
/* Spends its time in libc's memset (an internal, local symbol such as __memset_avx2_unaligned_erms)
 * called from main, which libc's local __libc_start_call_main calls.
 *   sym_libc SECONDS */
#include <string.h>

#include "spin_common.h"

static char buf[1 << 20];

int main(int argc, char **argv)
{
	double end = spin_start(argc, argv);
	volatile char *p = buf;

	while (spin_now() < end) {
		for (int i = 0; i < 64; i++)
			memset(buf, i, sizeof(buf));
		(void)p[0];
	}
	return 0;
}
