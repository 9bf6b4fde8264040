// SPDX-License-Identifier: GPL-2.0-only
/* Memory profiling's sampling maths: the interval table, scaling samples back to estimates. */
#include <math.h>
#include <stdlib.h>

#include "memory/memsample.h"

void memsample__exp_table(uint32_t *table, size_t n, unsigned int shift)
{
	double sum = 0, *v = malloc(n * sizeof(*v));

	if (!v) {
		/* Without the table: a fixed interval, still the right mean. */
		for (size_t i = 0; i < n; i++)
			table[i] = 1u << shift;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = -log((i + 0.5) / (double)n);
		sum += v[i];
	}
	for (size_t i = 0; i < n; i++)
		table[i] = (uint32_t)(v[i] * n / sum * (double)(1u << shift) + 0.5);
	free(v);
}

void memsample__scale(uint64_t size, uint64_t mean, double u, uint64_t *objects,
		      uint64_t *bytes)
{
	double n;

	double p = mean <= 1 ? 1.0 : 1.0 - exp(-(double)size / (double)mean);

	if (p <= 0) /* size 0 */
		p = 1.0 / (double)mean;
	n = 1.0 / p;
	*objects = (uint64_t)n + (u < n - (double)(uint64_t)n);
	*bytes = (uint64_t)((double)size / p + 0.5);
}
