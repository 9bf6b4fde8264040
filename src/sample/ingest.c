// SPDX-License-Identifier: GPL-2.0-only
/* The one path from a raw stack to a sample's frames, and what samplers must know first. */

#define pr_fmt(fmt) "ingest: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/unwind_abi.h"
#include "collect/collect.h"
#include "lib/log.h"
#include "lib/timeconst.h"
#include "sample/ingest.h"
#include "proc/proctab.h"
#include "runtime/lua.h"
#include "runtime/python.h"
#include "runtime/tracectx.h"
#include "store/store.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"

_Static_assert(PROC_NOT_ADDRESS == UNWIND_FRAME_FILE, "proctab leaves BPF's file frames to us");
_Static_assert(PROC_JAVA_METHOD == UNWIND_FRAME_JAVA, "proctab hands the JVM its methods");

struct ingest {
	struct collect_ctx *ctx;
	uint64_t uaddrs[INGEST_MAX_USTACK];
	struct frame native[INGEST_MAX_USTACK]; /* user frames before Python frames go in */
	struct frame frames[INGEST_MAX_FRAMES];
};

struct ingest *ingest__new(struct collect_ctx *ctx)
{
	struct ingest *ing = calloc(1, sizeof(*ing));

	if (ing)
		ing->ctx = ctx;
	return ing;
}

void ingest__free(struct ingest *ing)
{
	free(ing);
}

/*
 * The frames BPF sent as their file and offset (UNWIND_FRAME(): found by the kernel's mappings,
 * for a process whose own may never be read) into frames[0, n), whose other words proctab
 * resolved by the process's mappings.
 */
static void file_frames(struct ingest *ing, struct frame *frames, uint32_t n)
{
	struct collect_ctx *ctx = ing->ctx;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t w = ing->uaddrs[i];
		struct dso *dso;

		if (!(w & UNWIND_FRAME_FILE))
			continue;
		dso = ctx->unwinder ? unwinder__slot_dso(ctx->unwinder, UNWIND_FRAME_SLOT(w)) : NULL;
		frames[i] = dso ? (struct frame){ dso, UNWIND_FRAME_OFF(w) } :
				  (struct frame){ symbolizer__unknown_dso(ctx->sym), 0 };
	}
}

/* User frames of p into out (room for INGEST_MAX_USTACK + INGEST_MAX_PYTHON + 1). */
static uint32_t user_frames(struct ingest *ing, const struct ingest_raw *raw, struct proc *p,
			    uint64_t now_ns, struct frame *out)
{
	struct collect_ctx *ctx = ing->ctx;
	uint32_t nu = raw->nr_ustack;
	bool cut = false, short_walk = false;

	if (!nu && raw->uend != SYM_MARKER_NONE && !raw->kthread) {
		out[0] = (struct frame){ symbolizer__marker_dso(ctx->sym, raw->uend), 0 };
		return out[0].dso ? 1 : 0;
	}
	if (!p || !nu)
		return 0;
	/* Past the leaf, stack entries are return addresses: step back into the call. A JVM's
	 * interpreted frame is its method, no address. */
	for (uint32_t i = 0; i < nu; i++)
		ing->uaddrs[i] = raw->ustack[i] - ((i > 0 || !raw->uleaf_exact) &&
						   !(raw->ustack[i] & UNWIND_FRAME_JAVA));
	if (raw->nr_python) {
		/* Python frames take the place of the evaluation loop's native frames. */
		nu = proctab__user_frames(ctx->proctab, p, ing->uaddrs, nu, ing->native, now_ns,
					  &cut);
		file_frames(ing, ing->native, nu);
		short_walk = cut || raw->utruncated;
		if (lua__pairs((const uint64_t *)raw->python, raw->nr_python))
			nu = lua__splice(ctx->lua, raw->pid, ing->native, ing->uaddrs, nu, &short_walk,
					 (const uint64_t *)raw->python, raw->nr_python, out,
					 INGEST_MAX_USTACK + INGEST_MAX_PYTHON);
		else
			nu = python__splice(ctx->python, raw->pid, ing->native, nu,
					    cut || raw->utruncated, (const uint64_t *)raw->python,
					    raw->nr_python, out,
					    INGEST_MAX_USTACK + INGEST_MAX_PYTHON);
	} else {
		nu = proctab__user_frames(ctx->proctab, p, ing->uaddrs, nu, out, now_ns, &cut);
		file_frames(ing, out, nu);
	}
	/* Say where the walk stopped rather than let the stack pass for complete. */
	if (nu && (cut || raw->utruncated || short_walk))
		out[nu++] = (struct frame){ symbolizer__marker_dso(ctx->sym, SYM_MARKER_TRUNCATED), 0 };
	return nu;
}

/* Whether raw needs none of its process's maps: a whole walk whose every frame BPF sent as
 * its file and offset (bpf/unwind.bpf.h: a process walked by a table of BPF's own), or no user
 * frames to name at all. Interpreted frames want their runtime's state: not described. */
static bool described(const struct ingest_raw *raw)
{
	if (raw->nr_python || (raw->nr_ustack && raw->utruncated))
		return false;
	for (uint32_t i = 0; i < raw->nr_ustack; i++)
		if (!(raw->ustack[i] & UNWIND_FRAME_FILE))
			return false;
	return true;
}

int ingest__resolve(struct ingest *ing, const struct ingest_raw *raw, uint64_t now_ns,
		    struct ingest_stack *out)
{
	struct collect_ctx *ctx = ing->ctx;
	uint32_t nk = raw->nr_kstack, nl = raw->leaf ? 1 : 0;
	struct dso *kernel;
	struct proc *p;

	if (nk > INGEST_MAX_KSTACK || raw->nr_ustack > INGEST_MAX_USTACK ||
	    raw->nr_python > INGEST_MAX_PYTHON)
		return -E2BIG;
	if (nl)
		ing->frames[0] = *raw->leaf;
	if (nk) {
		kernel = symbolizer__kernel_dso(ctx->sym);
		for (uint32_t i = 0; i < nk; i++)
			ing->frames[nl + i] = (struct frame){
				kernel, raw->kstack[i] - (i > 0 || !raw->kleaf_exact)
			};
	}
	/* Its exec (or its exit's mappings) may wait in the process ring: a quiet exec wakes
	 * nobody. Taken since the last drain began, or of a process not known, it drains. */
	if (ctx->proc_ring && !raw->kthread &&
	    ((raw->time_ns && raw->time_ns >= ctx->proc_drained_ns) ||
	     !proctab__find(ctx->proctab, raw->pid)))
		collect__drain_procs(ctx);
	/* A process seen first here is learned now: its observers (Python's among them) hear
	 * of its maps before its frames are resolved. A quiet one BPF described whole is not. */
	p = proctab__get_sample(ctx->proctab, raw->pid, raw->kthread, described(raw), now_ns);
	/* Taken before an exec, in the image of the parent it was forked from: named as that. */
	p = proctab__image_at(ctx->proctab, p, raw->time_ns, now_ns);
	*out = (struct ingest_stack){
		.proc = p,
		.frames = ing->frames,
		.nr_frames = nl + nk + user_frames(ing, raw, p, now_ns, ing->frames + nl + nk),
	};
	return 0;
}

void ingest__describe(struct sample *s, struct proc *p)
{
	s->exe = p ? proc__exe(p) : "";
	s->exe_path = p ? proc__exe_path(p) : "";
	s->container_id = p ? proc__container_id(p) : "";
	s->service = p ? proc__service(p) : "";
}

/* --- what the samplers' BPF must know of each process --------------------------------- */

/*
 * Where the process's threads publish their trace context (OTEP 4947, Go pprof labels, Elastic
 * APM), for the BPF programs to read at every sample. Looked up whenever the mappings were
 * read: at exec (a variable in the executable is found from its file alone), and again at each
 * re-read (a library defining it is mapped after exec, by the dynamic loader or dlopen).
 */
static bool publish_trace_context(struct collect_ctx *ctx, uint32_t pid, const struct proc *p,
				  const struct proc_map *maps, uint32_t n)
{
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
	struct proc *p = ctx->proctab ? proctab__find(ctx->proctab, pid) : NULL;
	bool published;

	/* Before the unwinder: handing it the maps may wait for its builders' lock, and a new
	 * process's samples read the context as soon as it is in tracectx_offsets. */
	published = n && publish_trace_context(ctx, pid, p, maps, n);
	if (!ctx->unwinder)
		return;
	/* None found: samplers may skip the lookup, unless the loader may still be mapping the
	 * library that has one. */
	unwinder__update_flags(ctx->unwinder, pid, maps, n,
			       !published && p && !proc__loading(p, now_ns()) ?
				       UNWIND_PROC_NO_TRACECTX :
				       0);
}

/* Started while we run: its samples matter from its first, its tables first. */
static void exec_cb(void *arg, uint32_t pid, struct proc *p)
{
	struct collect_ctx *ctx = arg;

	if (p && ctx->unwinder)
		unwinder__urgent(ctx->unwinder, pid);
}

/* A process found gone by a maps read: its exit's mappings may wait in the process ring. */
static void gone_cb(void *arg)
{
	collect__drain_procs(arg);
}

int ingest__observe(struct collect_ctx *ctx)
{
	proctab__on_gone(ctx->proctab, gone_cb, ctx);
	return proctab__observe(ctx->proctab, &(struct proc_observer){
						      .name = "ingest",
						      .maps = maps_cb,
						      .exec = exec_cb,
						      .ctx = ctx,
					      });
}
