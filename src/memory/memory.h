/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_MEMORY_MEMORY_H
#define AUTOPROF_MEMORY_MEMORY_H

#include <stdint.h>

#include "lib/buf.h"
#include "collect/collect.h"
#include "memory/memtarget.h"
#include "memory/preload.h"

/*
 * Memory profiling in attach mode: uprobes on the allocator of each target process (whichever
 * of its objects defines malloc), byte-sampled in BPF. Sampled allocations go to the store as
 * the allocs profile; the live ones are held here for the heap profile.
 *
 * The ingest thread drives it (events, process exec/exit, memory__tick); the API and heap
 * queries may come from any thread.
 */
struct memory;
struct store_filter;
struct store_row;

struct memory_opts {
	uint64_t mean_interval; /* bytes between samples on average; 1: every allocation */
	uint32_t max_live;	/* live sampled allocations held at most */
	uint64_t ringbuf_size;
	const char *targets;	/* "PATTERN[,PATTERN...]" from the config, may be "" */
};

struct memory *memory__new(const struct memory_opts *opts, struct collect_ctx *ctx, int *err);
void memory__free(struct memory *m); /* accepts NULL */
/* Ingest thread, every drain: attaches pending targets, applies API changes. */
void memory__tick(struct memory *m);
struct proctab;
/* Listens to processes' lives (proc/proctab.h): an exec'd process may now match a target; an
 * exec or exit ends the old image's probes and live set. */
int memory__observe(struct memory *m, struct proctab *pt);

/*
 * API: adds a target, *id its number. A pid target is of the process with that pid now, not of
 * a later one given the same pid. 0, -ESRCH (no process has the pid), -ENOSPC (already
 * MEMORY_MAX_TARGETS) or -ENOMEM.
 */
int memory__add_target(struct memory *m, const struct memtarget_spec *spec, uint32_t *id);
/* API: removes target id (its processes are detached at the next tick). 0 or -ENOENT. */
int memory__remove_target(struct memory *m, uint32_t id);
/* API: the targets as a JSON array, appended to out. */
int memory__list_targets(struct memory *m, struct buf *out);

/*
 * The live sampled allocations matching filter (pids only), aggregated by (pid, tid, stack):
 * values inuse_objects and inuse_space at [2] and [3]. Frames hold dso references until
 * store_rows__free(). 0 or -ENOMEM.
 */
int memory__live_rows(struct memory *m, const struct store_filter *filter,
		      struct store_row **rows, size_t *nr);
uint64_t memory__mean_interval(const struct memory *m);

struct memory_stats {
	unsigned long long bpf[16]; /* enum memory_counter */
	unsigned long long targets;
	unsigned long long procs_attached, procs_pending;
	unsigned long long procs_preload; /* of the attached, through the preload shim */
	unsigned long long procs_go;	  /* of the attached, through Go's runtime */
	unsigned long long procs_java;	  /* of the attached, through HotSpot's AllocTracer */
	unsigned long long jvm_unprobed;  /* JVM targets whose libjvm.so lacks AllocTracer */
	unsigned long long java_class_unnamed; /* Java samples whose class was not read */
	unsigned long long live, live_bytes; /* held now; bytes as estimated */
	unsigned long long ingested, drop_store, drop_malformed;
	unsigned long long attach_ok, attach_failed;
	unsigned long long probes_emulated, probes_entry;
	struct preload_ring_stats preload; /* preload rings, those closed included */
};
void memory__stats(struct memory *m, struct memory_stats *out);

#endif
