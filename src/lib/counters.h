/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_COUNTERS_H
#define AUTOPROF_LIB_COUNTERS_H

/*
 * Every BPF program counts what it drops and why in a per-CPU array of __u64, its slots named
 * by an enum of its ABI header; user space sums the CPUs' copies for /metrics.
 */

/* Sums slots [0, n) of the per-CPU array map_fd into out. Returns 0 or a negative errno. */
int counters__read(int map_fd, unsigned long long *out, unsigned int n);

#endif
