/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_MEMORY_MEMSAMPLE_H
#define AUTOPROF_MEMORY_MEMSAMPLE_H

/*
 * Memory profiling's sampling maths, apart from BPF so that it is unit tested: the sampling
 * intervals and how samples are scaled back to estimates.
 */
#include <stddef.h>
#include <stdint.h>

/*
 * Fills table[0, n) (n a power of two) with -ln(u) at the n quantiles u = (i + 1/2) / n, in
 * fixed point << shift and normalized to a mean of exactly 1: a sampling interval is
 * mean * table[random] >> shift, a quantized exponential distribution with the given mean.
 */
void memsample__exp_table(uint32_t *table, size_t n, unsigned int shift);

/*
 * What one sampled allocation of size bytes stands for, with byte sampling at mean interval:
 * it was sampled with probability 1 - exp(-size/mean), so it estimates 1/that allocations
 * (Go's and tcmalloc's scaling). *bytes is rounded to the nearest integer; *objects, whose
 * fraction matters (a 64 KiB block at a 64 KiB mean stands for 1.58), is rounded up with the
 * probability of its fraction, u uniform in [0, 1), so that sums stay unbiased.
 */
void memsample__scale(uint64_t size, uint64_t mean, double u, uint64_t *objects,
		      uint64_t *bytes);

#endif
