// SPDX-License-Identifier: GPL-2.0-only
/* Growable arrays: see array.h. */
#include <errno.h>
#include <stdlib.h>

#include "lib/array.h"

void *array__grow(void *p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n;

	if (need <= *cap)
		return p;
	/* Doubling past 2^31 would wrap to 0 and never end. */
	if (need > UINT32_MAX / 2 + 1)
		return NULL;
	n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	p = realloc(p, (size_t)n * size);
	if (p)
		*cap = n;
	return p;
}

int array__reserve(void **p, uint32_t *cap, uint64_t need, size_t size)
{
	void *a;

	if (need > UINT32_MAX)
		return -ENOMEM;
	/* Room for nothing is always there, even before the first allocation. */
	if (!need)
		return 0;
	a = array__grow(*p, cap, (uint32_t)need, size);
	if (!a)
		return -ENOMEM;
	*p = a;
	return 0;
}

void *array__alloc(size_t nmemb, size_t size)
{
	return calloc(nmemb ? nmemb : 1, size);
}
