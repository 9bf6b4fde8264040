/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UNWIND_CHUNKS_H
#define AUTOPROF_UNWIND_CHUNKS_H

/*
 * The unwind tables' elements in BPF (bpf/unwind_abi.h, unwind_chunks): an array of arrays of
 * UNWIND_CHUNK_ELEMS 8-byte elements each, whose chunks are made as the highest element in use
 * reaches them, so that a quiet host pays for the tables it has rather than for the whole
 * budget. Chunks are never taken back (the allocator fills the lowest room first). Each is
 * mapped here, writable: the unwinder writes rows with memcpy, and walks of copied stacks read
 * what BPF reads.
 *
 * Not locked: chunks__reserve, chunks__made and chunks__bytes are the unwinder's, under its
 * lock; chunks__write too, or on room it owns; chunks__elem may be called from any thread (a
 * chunk, once visible, stays).
 */
#include <stdint.h>

struct chunks;

/* Room for capacity elements (at least 1), the first chunk made. NULL with *err set. */
struct chunks *chunks__new(const char *name, uint32_t capacity, int *err);
void chunks__free(struct chunks *c); /* accepts NULL */

/* The outer map (owned by c), for BPF objects to reuse. */
int chunks__fd(const struct chunks *c);

/* Elements [0, end) are backed by chunks (end <= capacity): 0, or a negative errno (the
 * memlock or memory ran out: the caller gives the room back). */
int chunks__reserve(struct chunks *c, uint32_t end);

/* Copies n elements to [start, start + n), which chunks__reserve backed. */
void chunks__write(struct chunks *c, uint32_t start, const void *elems, uint32_t n);

/* Element idx as BPF sees it, or NULL: past the capacity or in no chunk yet. */
const void *chunks__elem(const struct chunks *c, uint32_t idx);

/* Chunks made so far: elements [0, that * UNWIND_CHUNK_ELEMS) are backed. */
uint32_t chunks__made(const struct chunks *c);

/* Bytes of chunks made so far (the kernel's memlock of each: its elements and header). */
uint64_t chunks__bytes(const struct chunks *c);

#endif
