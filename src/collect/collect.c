// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "collect: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "proc/proctab.h"
#include "unwind/unwind.h"
#include "bpf/unwind_abi.h"
#include "collect/collect.h"
#include "runtime/tracectx.h"

int collect__add_ring(struct collect_ctx *ctx, int map_fd, int (*fn)(void *, void *, size_t),
		      void *fn_ctx, struct ring **ring)
{
	int err;

	if (!ctx->rb) {
		ctx->rb = ring_buffer__new(map_fd, fn, fn_ctx, NULL);
		if (!ctx->rb) {
			err = -errno;
			pr_err("cannot create ring buffer manager: %s\n", strerror(-err));
			return err;
		}
	} else {
		err = ring_buffer__add(ctx->rb, map_fd, fn, fn_ctx);
		if (err) {
			pr_err("cannot add ring buffer: %s\n", strerror(-err));
			return err;
		}
	}
	if (ring)
		*ring = ring_buffer__ring(ctx->rb, ctx->nr_rings);
	ctx->nr_rings++;
	return 0;
}

int collect__read_counters(int map_fd, unsigned long long *out, unsigned int n)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long *vals;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (unsigned int k = 0; k < n; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(map_fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

unsigned long long collect__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Where the process's threads publish their trace context (OTEP 4947, Go pprof labels, Elastic
 * APM), for the BPF programs to read at every sample. Looked up whenever the mappings were
 * read: at exec (a variable in the executable is found from its file alone), and again at each
 * re-read (a library defining it is mapped after exec, by the dynamic loader or dlopen).
 */
static bool publish_trace_context(struct collect_ctx *ctx, uint32_t pid,
				  const struct proc_map *maps, uint32_t n)
{
	struct proc *p = ctx->proctab ? proctab__find(ctx->proctab, pid) : NULL;
	struct tracectx_loc loc;
	int err;

	if (ctx->tracectx_fd < 0)
		return false;
	/* The maps just read and what is kept of their files: no file is read again. */
	err = ctx->tracectx_cache
		      ? tracectx__locate_maps(ctx->tracectx_cache, (int)pid,
					      p ? proc__exe_path(p) : "", maps, n, &loc)
		      : tracectx__locate((int)pid, &loc);
	if (err)
		return false;
	if (bpf_map_update_elem(ctx->tracectx_fd, &pid, &loc, BPF_ANY)) {
		pr_debug("cannot record the trace context of pid %u: %s\n", pid, strerror(errno));
		return false;
	}
	pr_debug("pid %u publishes its trace context (kind %u) at fs%+lld\n", pid, loc.kind,
		 (long long)loc.tp_offset);
	return true;
}

static void maps_cb(void *arg, uint32_t pid, const struct proc_map *maps, uint32_t n)
{
	struct collect_ctx *ctx = arg;
	/*
	 * Before the unwinder: handing it the maps may wait tens of ms for its builder's lock (for
	 * every process at start, on a busy machine), and a new process, which has no mapping
	 * table yet, has its samples read the context as soon as it is in tracectx_offsets.
	 */
	bool published = n && publish_trace_context(ctx, pid, maps, n);

	if (!ctx->unwinder)
		return;
	/* Samplers skip the trace-context lookup for processes without this flag: it comes with
	 * the table (set after it, the walks between would skip the lookup, and the builders
	 * can hold the lock between for the tens of ms of a big table's rows). */
	unwinder__update_flags(ctx->unwinder, pid, maps, n, published ? UNWIND_PROC_TRACECTX : 0);
}

/* Started while we run: its samples matter from its first, its tables first. */
static void exec_cb(void *arg, uint32_t pid, struct proc *p)
{
	struct collect_ctx *ctx = arg;

	if (p && ctx->unwinder)
		unwinder__urgent(ctx->unwinder, pid);
}

int collect__observe(struct collect_ctx *ctx)
{
	return proctab__observe(ctx->proctab, &(struct proc_observer){
						      .name = "collect",
						      .maps = maps_cb,
						      .exec = exec_cb,
						      .ctx = ctx,
					      });
}

int collect__share_maps(struct collect_ctx *ctx, struct bpf_object *obj)
{
	const struct {
		const char *name;
		int fd;
		bool optional; /* -1: the object keeps its own (then unused) map */
	} shared[] = {
		{ "known_pids", ctx->known_pids_fd, false },
		{ "tracectx_offsets", ctx->tracectx_fd, false },
		{ "probe_threads", ctx->probe_threads_fd, true },
		{ "python_procs", ctx->python_fd, false },
		{ "python_threads", ctx->python_threads_fd, false },
	};
	int err;

	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, shared[i].name);

		if (!map || (shared[i].optional && shared[i].fd < 0))
			continue;
		if (shared[i].fd < 0)
			return -EBADF;
		err = bpf_map__reuse_fd(map, shared[i].fd);
		if (err)
			return err;
	}
	/* Without tables (unwind.mode=fp) the unwind maps stay the object's own, unused. */
	return ctx->unwinder ? unwinder__reuse_maps(ctx->unwinder, obj) : 0;
}
