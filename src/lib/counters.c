// SPDX-License-Identifier: GPL-2.0-only
/* Per-CPU BPF counters summed for /metrics: see counters.h. */

#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/counters.h"

int counters__read(int map_fd, unsigned long long *out, unsigned int n)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long *vals;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (unsigned int k = 0; k < n; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(map_fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}
