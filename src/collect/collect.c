// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "collect: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/timeconst.h"
#include "unwind/unwind.h"
#include "collect/collect.h"

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

void collect__drain_procs(struct collect_ctx *ctx)
{
	if (!ctx->proc_ring || ctx->in_proc_ring)
		return;
	ctx->proc_drained_ns = now_ns();
	ring__consume(ctx->proc_ring);
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
		{ "lua_procs", ctx->lua_fd, false },
		{ "lua_threads", ctx->lua_threads_fd, false },
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
