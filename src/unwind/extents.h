/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UNWIND_EXTENTS_H
#define AUTOPROF_UNWIND_EXTENTS_H

/*
 * The free ranges of a fixed-size array: the unwinder hands out runs of unwind_rows and of
 * unwind_pages to files, first fit, and takes them back merged with their neighbours. A plain
 * value the unwinder embeds and guards with its own lock.
 */
#include <stdint.h>

struct extent {
	uint32_t start, len;
};

struct extents {
	struct extent *free; /* sorted by start, owned */
	uint32_t nr, cap;
	uint32_t capacity; /* entries of the array */
};

/* All of [0, capacity) free: 0 or -ENOMEM. */
int extents__init(struct extents *p, uint32_t capacity);
/* The start of n free entries (first fit), or UINT32_MAX when no range is long enough. */
uint32_t extents__alloc(struct extents *p, uint32_t n);
/* [start, start + n) free again; on out of memory the range is lost until restart, logged. */
void extents__release(struct extents *p, uint32_t start, uint32_t n);
/* The array ends at capacity from now on (when smaller): free ranges past it are dropped; the
 * caller has none in use there. */
void extents__cap(struct extents *p, uint32_t capacity);
/* Entries free in all. */
uint64_t extents__free_count(const struct extents *p);
/* Accepts a zeroed or exited one. */
void extents__exit(struct extents *p);

#endif
