/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_GPU_GPUMEM_H
#define AUTOPROF_GPU_GPUMEM_H

/*
 * GPU memory profiling: uprobes on the CUDA runtime and driver (src/gpu/cudafns.c), attached
 * once per library file for every process that maps it, found in the mappings of the processes
 * the proctab learns. Every allocation that succeeds goes to the store (gpuallocs); the live
 * ones are held here (gpuheap, autoprof_gpu_memory_inuse_bytes) until freed or their process
 * exits.
 *
 * The ingest thread drives it (events, process maps and exits); queries and /metrics may come
 * from any thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "collect/collect.h"

struct gpumem;
struct proctab;
struct store_filter;
struct store_row;
struct metrics_writer;

struct gpumem_opts {
	uint32_t max_live;     /* live allocations held at most (more are counted, not held) */
	uint64_t ringbuf_size;
	uint64_t torch_mean;   /* PyTorch tensors: mean bytes between sampled ones; 1: every one */
};

struct gpumem *gpumem__new(const struct gpumem_opts *opts, struct collect_ctx *ctx, int *err);
void gpumem__free(struct gpumem *g); /* accepts NULL */
/* Listens to processes: a mapped CUDA library is probed; an exec or exit drops a live set. */
int gpumem__observe(struct gpumem *g, struct proctab *pt);

/*
 * The live allocations matching filter (pids only), aggregated by (pid, tid, api, device,
 * stack): values gpu_inuse_objects and gpu_inuse_space at [2] and [3]. The caller frees them
 * with store_rows__free(). 0 or -ENOMEM.
 */
int gpumem__live_rows(struct gpumem *g, const struct store_filter *filter,
		      struct store_row **rows, size_t *nr);

struct gpumem_stats {
	unsigned long long bpf[16]; /* enum gpumem_counter */
	unsigned long long libraries;	     /* library files probed */
	unsigned long long attach_failed;    /* library files that could not be */
	unsigned long long live, live_bytes; /* held now */
	unsigned long long drop_live_full;   /* allocations not held: the table was full */
	unsigned long long frees_unknown;    /* frees of nothing held (made before autoprof) */
	unsigned long long ingested, drop_store, drop_malformed;
	uint64_t torch_mean;
};
void gpumem__stats(struct gpumem *g, struct gpumem_stats *out);
/* autoprof_gpu_memory_inuse_bytes{pid,exe,gpu}: one sample per process and device. */
void gpumem__inuse_metrics(struct gpumem *g, struct metrics_writer *w);

#endif
