/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_ARRAY_H
#define AUTOPROF_LIB_ARRAY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Returns p grown (doubling from 64) to hold need elements of size, *cap updated; or NULL,
 * p untouched, when out of memory or need is beyond 2^31 elements.
 */
void *array__grow(void *p, uint32_t *cap, uint32_t need, size_t size);
/* The same in the errno style: *p grown to hold need elements, 0 or -ENOMEM (*p untouched). */
int array__reserve(void **p, uint32_t *cap, uint64_t need, size_t size);
/* calloc that does not mistake an empty array for an allocation failure. */
void *array__alloc(size_t nmemb, size_t size);

#endif
