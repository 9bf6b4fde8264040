/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PRELOAD_H
#define AUTOPROF_PRELOAD_H

/*
 * What libautoprof_preload.so exports besides the malloc family: the record autoprof finds it by
 * (in .dynsym) and the two markers it probes. Each marker's first instruction is a 5-byte nop.
 */
#include <stddef.h>
#include <stdint.h>

struct autoprof_preload {
	uint32_t version; /* 1 */
	uint32_t pad;
	uint64_t mean;	    /* mean sampling interval in bytes */
	uint64_t sampled;   /* allocations sampled */
	uint64_t live;	    /* of which not freed yet */
	uint64_t untracked; /* sampled, but no memory to remember them: not reported */
};
extern struct autoprof_preload autoprof_preload_v1;

/*
 * A sampled allocation of size bytes at ptr, drawn with mean interval `mean`, by a call that
 * returns to pc with the caller's stack pointer sp and frame pointer bp (where the stack walk
 * starts; pc 0: from the marker itself).
 */
void autoprof_preload_alloc(void *ptr, size_t size, uint64_t mean, void *pc, void *sp, void *bp);
/* A sampled allocation is about to be freed (or moved by realloc). */
void autoprof_preload_free(void *ptr);

#endif
