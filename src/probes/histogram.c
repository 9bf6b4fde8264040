// SPDX-License-Identifier: GPL-2.0-only
/* Latency probes' histogram: log-linear buckets of call durations and their quantiles. */
#include <math.h>
#include <stdlib.h>

#include "probes/histogram.h"

#define LINEAR	 16 /* values 0..16 each have their own bucket */
#define MAX_POW2 43 /* the last power of two split in four */

size_t latency__bucket(uint64_t ns)
{
	uint64_t u;
	int k;

	if (ns <= LINEAR)
		return (size_t)ns;
	u = ns - 1;
	k = 63 - __builtin_clzll(u);
	if (k > MAX_POW2)
		return LATENCY_BUCKETS - 1;
	return LINEAR + 1 + (size_t)(k - 4) * 4 + ((u >> (k - 2)) & 3);
}

uint64_t latency__le(size_t i)
{
	size_t k, sub;

	if (i <= LINEAR)
		return i;
	if (i >= LATENCY_BUCKETS)
		i = LATENCY_BUCKETS - 1;
	k = (i - LINEAR - 1) / 4 + 4;
	sub = (i - LINEAR - 1) % 4;
	return (uint64_t)(5 + sub) << (k - 2);
}

uint64_t latency__quantile(const double *counts, double q)
{
	double total = 0, rank, cum = 0;

	for (size_t i = 0; i < LATENCY_BUCKETS; i++)
		total += counts[i];
	if (total <= 0)
		return 0;
	rank = q * total;
	for (size_t i = 0; i < LATENCY_BUCKETS; i++) {
		double lo, hi;

		if (counts[i] <= 0)
			continue;
		if (cum + counts[i] >= rank) {
			lo = i ? (double)latency__le(i - 1) : 0;
			hi = (double)latency__le(i);
			return (uint64_t)(lo + (hi - lo) * ((rank - cum) / counts[i]) + 0.5);
		}
		cum += counts[i];
	}
	return latency__le(LATENCY_BUCKETS - 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void latency__sort(uint64_t *vals, size_t n)
{
	qsort(vals, n, sizeof(*vals), cmp_u64);
}

uint64_t latency__rank(const uint64_t *vals, size_t n, double q)
{
	double r;
	size_t rank;

	if (!n)
		return 0;
	/* The epsilon keeps 0.95 * 20 at rank 19: the product is 19.000000000000004 in doubles. */
	r = ceil(q * (double)n - 1e-9);
	rank = r < 1 ? 1 : r > (double)n ? n : (size_t)r;
	return vals[rank - 1];
}
