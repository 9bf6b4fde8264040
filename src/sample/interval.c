// SPDX-License-Identifier: GPL-2.0-only
#include "lib/timeconst.h"
#include "sample/interval.h"

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
		uint64_t edge = (t / NSEC_PER_SEC + 1) * NSEC_PER_SEC;
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
