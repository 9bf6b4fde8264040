/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_COLLECT_H
#define AUTOPROF_COLLECT_H

#include <stdint.h>

/*
 * What every collector feeds: the store (samples), the process table (mappings and names) and
 * the symbolizer (dsos). Collectors run on the ingest thread only.
 */
#include <stdbool.h>
#include <stdint.h>

struct store;
struct proctab;
struct symbolizer;
struct ring_buffer;
struct proccpu;
struct unwinder;
struct probes;
struct python;
struct lua;

struct collect_ctx {
	struct store *store;
	struct proctab *proctab;
	struct symbolizer *sym;
	/* All collectors' ring buffers are drained by one ring_buffer manager on one thread. */
	struct ring_buffer *rb;
	unsigned int nr_rings;
	/* The process collector's ring (exec, exit, mappings; NULL without it), drained before
	 * a sample whose process may have an event waiting there (quiet execs wake nobody), and
	 * when it was last (CLOCK_MONOTONIC). */
	struct ring *proc_ring;
	uint64_t proc_drained_ns;
	bool in_proc_ring; /* its records are being handled: no drain may nest in one */
	/* The process collector's pid map that samplers share (bpf/proc_abi.h), -1 until loaded. */
	int known_pids_fd;
	/* CPU time per process, for /metrics and its exemplars. */
	struct proccpu *cpu;
	/* Its pid -> thread-context offset map (bpf/tracectx.bpf.h), -1 until loaded. */
	int tracectx_fd;
	/* What each file tells about trace contexts, kept per file (NULL: read at every exec). */
	struct tracectx_cache *tracectx_cache;
	/* Its pid -> CPython runtime map (bpf/python_procs.bpf.h), -1 until loaded. */
	int python_fd;
	/* Its thread -> CPython thread state map (bpf/python_procs.bpf.h), -1 until loaded. */
	int python_threads_fd;
	/* Python frames: what it learned of each CPython process (NULL: not tracked). */
	struct python *python;
	/* Its pid -> Lua release map and thread -> lua_State map (bpf/lua_procs.bpf.h), -1 until
	 * loaded. */
	int lua_fd, lua_threads_fd;
	/* Lua frames: what it learned of each Lua process (NULL: not tracked). */
	struct lua *lua;
	/* Unwind tables shared by every sampler's BPF object; NULL: frame pointers only. */
	struct unwinder *unwinder;
	/* The probe collector's thread -> probed calls map (bpf/probes.bpf.h), -1 without it. */
	int probe_threads_fd;
	/* Latency probes, told of samples taken inside probed calls; NULL without them. */
	struct probes *probes;
};

struct ring;
/* Drains the process ring now (its exec, exit and mappings records), unless one of its
 * records is being handled (a drain nested in one would handle the next ones twice). */
void collect__drain_procs(struct collect_ctx *ctx);
/*
 * Adds map_fd to ctx->rb (creating it on first use); *ring (optional) gets the ring, for
 * occupancy. Returns 0 or a negative errno.
 */
int collect__add_ring(struct collect_ctx *ctx, int map_fd, int (*fn)(void *, void *, size_t),
		      void *fn_ctx, struct ring **ring);
struct bpf_object;
/*
 * Before obj is loaded: points the maps every sampler shares at the ones in use (the process
 * collector's known_pids and tracectx_offsets where obj declares them, the unwinder's tables).
 * Returns 0 or a negative errno.
 */
int collect__share_maps(struct collect_ctx *ctx, struct bpf_object *obj);

#endif
