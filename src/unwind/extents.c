// SPDX-License-Identifier: GPL-2.0-only
/* The free ranges of a fixed-size array (extents.h). */
#define pr_fmt(fmt) "unwind: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "unwind/extents.h"

int extents__init(struct extents *p, uint32_t capacity)
{
	p->free = malloc(sizeof(*p->free) * 16);
	if (!p->free)
		return -ENOMEM;
	p->cap = 16;
	p->free[0] = (struct extent){ 0, capacity };
	p->nr = 1;
	p->capacity = capacity;
	return 0;
}

uint32_t extents__alloc(struct extents *p, uint32_t n)
{
	for (uint32_t i = 0; i < p->nr; i++) {
		struct extent *e = &p->free[i];
		uint32_t start = e->start;

		if (e->len < n)
			continue;
		e->start += n;
		e->len -= n;
		if (!e->len) {
			memmove(e, e + 1, (p->nr - i - 1) * sizeof(*e));
			p->nr--;
		}
		return start;
	}
	return UINT32_MAX;
}

void extents__release(struct extents *p, uint32_t start, uint32_t n)
{
	uint32_t i = 0;

	if (!n)
		return;
	while (i < p->nr && p->free[i].start < start)
		i++;
	if (i > 0 && p->free[i - 1].start + p->free[i - 1].len == start) {
		p->free[i - 1].len += n;
		if (i < p->nr && start + n == p->free[i].start) {
			p->free[i - 1].len += p->free[i].len;
			memmove(&p->free[i], &p->free[i + 1], (p->nr - i - 1) * sizeof(p->free[0]));
			p->nr--;
		}
		return;
	}
	if (i < p->nr && start + n == p->free[i].start) {
		p->free[i].start = start;
		p->free[i].len += n;
		return;
	}
	if (p->nr == p->cap) {
		struct extent *grown = realloc(p->free, 2 * p->cap * sizeof(*grown));

		if (!grown) {
			/* Leaks the range until restart rather than corrupting the list. */
			pr_warn("out of memory: %u table entries lost to the free list\n", n);
			return;
		}
		p->free = grown;
		p->cap *= 2;
	}
	memmove(&p->free[i + 1], &p->free[i], (p->nr - i) * sizeof(p->free[0]));
	p->free[i] = (struct extent){ start, n };
	p->nr++;
}

void extents__cap(struct extents *p, uint32_t capacity)
{
	uint32_t n = 0;

	if (capacity >= p->capacity)
		return;
	for (uint32_t i = 0; i < p->nr; i++) {
		struct extent e = p->free[i];

		if (e.start >= capacity)
			continue;
		if (e.len > capacity - e.start)
			e.len = capacity - e.start;
		p->free[n++] = e;
	}
	p->nr = n;
	p->capacity = capacity;
}

uint64_t extents__free_count(const struct extents *p)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < p->nr; i++)
		n += p->free[i].len;
	return n;
}

void extents__exit(struct extents *p)
{
	free(p->free);
	p->free = NULL;
	p->nr = p->cap = 0;
}
