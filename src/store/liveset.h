/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_STORE_LIVESET_H
#define AUTOPROF_STORE_LIVESET_H

/*
 * A live set: allocations not freed yet, each with the stack that made it, found by (process,
 * space, pointer), read back as rows of a heap profile (memory's heap, GPU memory's gpuheap).
 * space tells apart pointers that may be equal but name different things (GPU device memory,
 * pinned host memory, VMM handles, PyTorch's tensors inside device segments). Thread-safe: its
 * own lock.
 */
#include <stddef.h>
#include <stdint.h>

#include "symbolize/frame.h"

struct liveset;
struct store_filter;
struct store_row;

/* One allocation as a collector hands it over; the set copies it (and takes dso references). */
struct live_alloc {
	uint32_t pid, tid;
	uint64_t ptr;
	uint8_t space;
	uint8_t gpu_api; /* as struct sample's */
	uint16_t gpu;
	uint64_t objects, bytes; /* what it stands for (a sampled one: scaled) */
	const char *comm;	 /* thread name */
	const char *exe;	 /* process executable name */
	const struct frame *frames;
	uint32_t nr_frames;
};

/* max: entries held at most (0: no bound). NULL when out of memory. */
struct liveset *liveset__new(uint32_t max);
void liveset__free(struct liveset *ls); /* accepts NULL */
/* Holds a; an entry of the same key (its free was lost) is replaced. 0, -ENOSPC (full: a is
 * not held) or -ENOMEM. */
int liveset__add(struct liveset *ls, const struct live_alloc *a);
/* Forgets (pid, space, ptr). 0, or -ENOENT when it is not held. */
int liveset__remove(struct liveset *ls, uint32_t pid, uint8_t space, uint64_t ptr);
void liveset__drop_pid(struct liveset *ls, uint32_t pid);
/*
 * The entries of the processes filter keeps (pids only), aggregated by (pid, tid, labels,
 * stack): values inuse objects and bytes at [2] and [3]. The caller frees the rows with
 * store_rows__free(). 0 or -ENOMEM.
 */
int liveset__rows(struct liveset *ls, const struct store_filter *filter, struct store_row **rows,
		  size_t *nr);
/* Calls fn with each entry (under the set's lock: fn must not call the set). */
void liveset__for_each(struct liveset *ls, void (*fn)(const struct live_alloc *a, void *ctx),
		       void *ctx);
/* Entries held now and the bytes they stand for. */
void liveset__count(struct liveset *ls, uint64_t *entries, uint64_t *bytes);

#endif
