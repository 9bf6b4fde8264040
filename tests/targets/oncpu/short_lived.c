// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lives about 100 ms, all of it spinning in short_lived_spin(), then exits: its samples must
 * still come out symbolized although the process is gone when the profile is asked for.
 *   short_lived [MILLISECONDS]
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "target.h"

static volatile uint64_t sink;

__attribute__((noinline)) void short_lived_spin(double end)
{
	uint64_t x = 1;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1;
	sink = x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 100;

	short_lived_spin(now() + ms / 1000);
	return 0;
}
