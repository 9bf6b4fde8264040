/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROBES_HISTOGRAM_H
#define AUTOPROF_PROBES_HISTOGRAM_H

/*
 * The log-linear histogram of latency probes' call durations and its quantiles, apart from BPF
 * so that it is unit tested.
 */
#include <stddef.h>
#include <stdint.h>

/*
 * Log-linear buckets of nanoseconds: one per value up to 16, then four per power of two (each a
 * quarter of it wide) up to 2^44 ns (4.9 h; longer calls land in the last). Bucket i holds
 * (latency__le(i - 1), latency__le(i)]; every power of two >= 32 ns is a bucket bound, which the
 * Prometheus histogram uses as its le.
 */
#define LATENCY_BUCKETS 177

size_t latency__bucket(uint64_t ns);
/* The inclusive upper bound of bucket i. */
uint64_t latency__le(size_t i);
/*
 * The q-quantile (0 < q <= 1) of counts[0, LATENCY_BUCKETS), interpolated linearly inside its
 * bucket; 0 when the counts are all zero. Doubles: decayed histograms have fractional counts.
 */
uint64_t latency__quantile(const double *counts, double q);
/*
 * The q-quantile (0 < q <= 1) of n durations, exactly: the nearest rank, i.e. the smallest value
 * with at least q * n of them at or below it, so that a q-quantile of 0.95 leaves at most 5 % of
 * the values above it even when they sit in one tight cluster (interpolating inside a histogram
 * bucket lands above such a cluster, and then no value is above the quantile). vals must be
 * sorted (latency__sort); 0 when n is 0.
 */
uint64_t latency__rank(const uint64_t *vals, size_t n, double q);
void latency__sort(uint64_t *vals, size_t n);

#endif
