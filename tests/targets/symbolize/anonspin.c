// SPDX-License-Identifier: GPL-2.0-only
/* Calls the hidden spinner of the stripped libanon.so through a pointer.
 *   sym_anon SECONDS */
#include <stdint.h>

#include "spin_common.h"

void (*anon_get_spinner(void))(uint64_t);

int main(int argc, char **argv)
{
	double end = spin_start(argc, argv);
	void (*spin)(uint64_t) = anon_get_spinner();

	while (spin_now() < end)
		spin(1000000);
	return 0;
}
