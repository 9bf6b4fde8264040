// SPDX-License-Identifier: GPL-2.0-only
/*
 * main → sl_waiter → nanosleep({0, 1}) in a tight loop, with a timer slack of 1 ns so that each
 * sleep ends at once: the thread stays on CPU in the kernel's nanosleep path and in glibc's
 * wrappers (nanosleep → __clock_nanosleep), which have no frame pointers. A sample there must
 * continue from the kernel frames into clock_nanosleep, nanosleep, sl_waiter and main.
 *   uw_sleep SECONDS
 */
#include <sys/prctl.h>

#include "uw_common.h"

static volatile uint64_t sink;

UW_NOINLINE void sl_waiter(double end)
{
	const struct timespec ts = {0, 1};
	uint64_t n = 0;

	while (uw_now() < end)
		for (int i = 0; i < 1000; i++) {
			nanosleep(&ts, NULL);
			n++;
			UW_BARRIER();
		}
	sink = n;
}

int main(int argc, char **argv)
{
	double end = uw_start(argc, argv);

	/* Otherwise each 1 ns sleep lasts the default 50 µs slack, off CPU. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	sl_waiter(end);
	UW_BARRIER();
	return 0;
}
