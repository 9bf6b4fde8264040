// SPDX-License-Identifier: GPL-2.0-only
#include "sample/interval.h"

#define NSEC 1000000000ULL

int interval__split(uint64_t start_ns, uint64_t end_ns, uint64_t floor_ns, interval_part_fn fn,
		void *arg)
{
	uint64_t t = start_ns;

	if (end_ns <= start_ns)
		return end_ns < floor_ns ? 0 : fn(arg, end_ns, 0, true);
	if (t < floor_ns)
		t = floor_ns;
	while (t < end_ns) {
		/* The end of t's second, or of the span if it ends first. */
		uint64_t edge = (t / NSEC + 1) * NSEC;
		bool last = edge >= end_ns;
		int err;

		if (last)
			edge = end_ns;
		err = fn(arg, t, edge - t, last);
		if (err)
			return err;
		t = edge;
	}
	return 0;
}
