// SPDX-License-Identifier: GPL-2.0-only
/* The one path from a raw stack to a sample's frames: see ingest.h. */

#include <errno.h>
#include <stdlib.h>

#include "collect/collect.h"
#include "collect/ingest.h"
#include "proc/proctab.h"
#include "runtime/python.h"
#include "store/store.h"
#include "symbolize/symbolizer.h"

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

/* User frames of p into out (room for INGEST_MAX_USTACK + INGEST_MAX_PYTHON + 1). */
static uint32_t user_frames(struct ingest *ing, const struct ingest_raw *raw, struct proc *p,
			    uint64_t now_ns, struct frame *out)
{
	struct collect_ctx *ctx = ing->ctx;
	uint32_t nu = raw->nr_ustack;
	bool cut = false;

	if (!p || !nu)
		return 0;
	/* Past the leaf, stack entries are return addresses: step back into the call. */
	for (uint32_t i = 0; i < nu; i++)
		ing->uaddrs[i] = raw->ustack[i] - (i > 0 || !raw->uleaf_exact);
	if (raw->nr_python) {
		/* Python frames take the place of the evaluation loop's native frames. */
		nu = proctab__user_frames(ctx->proctab, p, ing->uaddrs, nu, ing->native, now_ns,
					  &cut);
		nu = python__splice(ctx->python, raw->pid, ing->native, nu,
				    cut || raw->utruncated, (const uint64_t *)raw->python,
				    raw->nr_python, out,
				    INGEST_MAX_USTACK + INGEST_MAX_PYTHON);
	} else {
		nu = proctab__user_frames(ctx->proctab, p, ing->uaddrs, nu, out, now_ns, &cut);
	}
	/* Say where the walk stopped rather than let the stack pass for complete. */
	if (nu && (cut || raw->utruncated))
		out[nu++] = (struct frame){ symbolizer__truncated_dso(ctx->sym), 0 };
	return nu;
}

int ingest__resolve(struct ingest *ing, const struct ingest_raw *raw, uint64_t now_ns,
		    struct ingest_stack *out)
{
	struct collect_ctx *ctx = ing->ctx;
	uint32_t nk = raw->nr_kstack;
	struct dso *kernel;
	struct proc *p;

	if (nk > INGEST_MAX_KSTACK || raw->nr_ustack > INGEST_MAX_USTACK ||
	    raw->nr_python > INGEST_MAX_PYTHON)
		return -E2BIG;
	if (nk) {
		kernel = symbolizer__kernel_dso(ctx->sym);
		for (uint32_t i = 0; i < nk; i++)
			ing->frames[i] = (struct frame){
				kernel, raw->kstack[i] - (i > 0 || !raw->kleaf_exact)
			};
	}
	/* A process seen first here is learned now: its observers (Python's among them) hear
	 * of its maps before its frames are resolved. */
	p = proctab__get(ctx->proctab, raw->pid, raw->kthread, now_ns);
	*out = (struct ingest_stack){
		.proc = p,
		.frames = ing->frames,
		.nr_frames = nk + user_frames(ing, raw, p, now_ns, ing->frames + nk),
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
