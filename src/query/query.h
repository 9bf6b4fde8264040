/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_QUERY_QUERY_H
#define AUTOPROF_QUERY_QUERY_H

/*
 * What a profile type means, answered alike for the HTTP routes, the web view and the OTLP
 * push: cpu, offcpu, allocs and gpuallocs are the store's rows of a window; heap is memory's
 * live sampled allocations now (inuse_*) beside the allocations of the window (alloc_*) (asking
 * the store for heap rows finds none: it never holds them), gpuheap the same of GPU memory; latency is one probe's slow and fast calls
 * side by side (a filter naming the probe). The encoders only encode what comes back.
 */
#include <stdbool.h>
#include <stdint.h>

#include "store/profiles.h"
#include "store/store.h"

struct memory;
struct gpumem;
struct history;

/* Where answers come from. memory (gpumem) is NULL when memory (GPU memory) profiling is not
 * running. */
struct query_sources {
	struct store *store;
	struct memory *memory;
	struct gpumem *gpumem;
	struct history *history; /* NULL when profiles are kept in memory only */
};

/*
 * The last window_ns; or (window_ns 0) the whole CLOCK_MONOTONIC seconds [first, last]; or
 * (end_ns set) the CLOCK_REALTIME range [start_ns, end_ns), from disk where memory no longer
 * holds it (whole records of storage.flush-interval there) and from memory after.
 */
struct query_window {
	uint64_t window_ns;
	int64_t first_sec, last_sec;
	uint64_t start_ns, end_ns;
};

struct query_result;

/*
 * Answers profile type over window for the processes filter keeps (NULL: all). PROFILE_LATENCY:
 * the CPU samples inside the calls of filter's probe, as (slow samples, slow ns, fast samples,
 * fast ns), whatever filter's latency says. Returns 0 and a
 * result the caller frees with query_result__free(), -EINVAL for a bad window, or -ENOMEM.
 */
int query__profile(const struct query_sources *src, enum profile_type type,
		   const struct query_window *w, const struct store_filter *filter,
		   struct query_result **out);
/* The rows, for the encoders; owned by the result. */
const struct store_result *query_result__rows(const struct query_result *qr);
void query_result__free(struct query_result *qr); /* accepts NULL */

/* Whether type's answer depends on a window (heap and gpuheap are live sets now: they do
 * not). */
static inline bool query__windowed(enum profile_type type)
{
	return type != PROFILE_HEAP && type != PROFILE_GPUHEAP;
}

/* The type whose stored rows list the processes of type (heap: those that allocated). */
static inline enum profile_type query__process_type(enum profile_type type)
{
	return type == PROFILE_HEAP	 ? PROFILE_ALLOCS :
	       type == PROFILE_GPUHEAP ? PROFILE_GPUALLOCS :
					 type;
}

#endif
