// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "proc: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "../lib/log.h"
#include "../symbolize/proctab.h"
#include "../unwind/unwind.h"
#include "bpf/proc.h"
#include "bpf/proc.skel.h"
#include "proc.h"
#include "proccpu.h"
#include "python.h"

#define MAX_PENDING_EXITS 4096

/*
 * Exits wait one drain: a sample taken while the process was exiting (in exit_mmap, say) may
 * be drained after its exit event, and should still find the process.
 */
struct proc_collector {
	struct collect_ctx *ctx;
	struct proc_bpf *skel;
	uint32_t pending[2][MAX_PENDING_EXITS];
	uint32_t nr_pending[2];
	int cur;
};

static int handle_event(void *arg, void *data, size_t size)
{
	struct proc_collector *pc = arg;
	const struct proc_ev *e = data;

	if (size < sizeof(*e))
		return 0;
	switch (e->type) {
	case PROC_EV_EXEC: {
		unsigned long long now = collect__now_ns();
		struct proc *p;

		/* Learning the maps now also finds a trace-context variable of the executable
		 * (from its file alone): the first samples are labelled too
		 * (collect__maps_learned). */
		p = proctab__exec(pc->ctx->proctab, e->pid, now);
		python__forget(pc->ctx->python, e->pid);
		if (p)
			python__locate(pc->ctx->python, p, e->pid);
		/* Started while we run: its samples matter from its first, its tables first. */
		if (p && pc->ctx->unwinder)
			unwinder__urgent(pc->ctx->unwinder, e->pid);
		if (pc->ctx->proc_listener)
			pc->ctx->proc_listener(pc->ctx->proc_listener_ctx, e->pid, false);
		break;
	}
	case PROC_EV_EXIT:
		if (pc->nr_pending[pc->cur] == MAX_PENDING_EXITS)
			proc_collector__reap(pc);
		pc->pending[pc->cur][pc->nr_pending[pc->cur]++] = e->pid;
		break;
	}
	return 0;
}

struct proc_collector *proc_collector__new(struct collect_ctx *ctx, int *err)
{
	struct proc_collector *pc = calloc(1, sizeof(*pc));

	if (!pc) {
		*err = -ENOMEM;
		return NULL;
	}
	pc->ctx = ctx;
	pc->skel = proc_bpf__open();
	if (!pc->skel) {
		*err = -errno;
		pr_err("cannot load BPF programs: %s\n", strerror(-*err));
		goto out_free;
	}
	/* The unwinder's mapping tables, whose entry an exec drops (and replaces with the
	 * executable's text, found by unwind_inodes). */
	pc->skel->rodata->unwind_tables = ctx->unwinder != NULL;
	*err = ctx->unwinder ? bpf_map__reuse_fd(pc->skel->maps.unwind_procs,
						 unwinder__map_fd(ctx->unwinder, "unwind_procs")) ?:
				       bpf_map__reuse_fd(pc->skel->maps.unwind_inodes,
							 unwinder__map_fd(ctx->unwinder,
									  "unwind_inodes")) :
			       0;
	if (!*err)
		*err = proc_bpf__load(pc->skel);
	if (*err) {
		pr_err("cannot load BPF programs: %s\n", strerror(-*err));
		goto out_destroy;
	}
	*err = proc_bpf__attach(pc->skel);
	if (*err) {
		pr_err("cannot attach to sched_process_exec/exit: %s\n", strerror(-*err));
		goto out_destroy;
	}
	ctx->known_pids_fd = bpf_map__fd(pc->skel->maps.known_pids);
	ctx->tracectx_fd = bpf_map__fd(pc->skel->maps.tracectx_offsets);
	ctx->python_fd = bpf_map__fd(pc->skel->maps.python_procs);
	*err = collect__add_ring(ctx, bpf_map__fd(pc->skel->maps.proc_events), handle_event, pc,
				  NULL);
	if (*err)
		goto out_destroy;
	return pc;

out_destroy:
	proc_bpf__destroy(pc->skel);
out_free:
	free(pc);
	return NULL;
}

void proc_collector__reap(struct proc_collector *pc)
{
	int old = !pc->cur;

	/* Apply the exits of the drain before this one; this drain's wait for the next. */
	for (uint32_t i = 0; i < pc->nr_pending[old]; i++) {
		proctab__exit(pc->ctx->proctab, pc->pending[old][i]);
		proccpu__exit(pc->ctx->cpu, pc->pending[old][i]);
		python__forget(pc->ctx->python, pc->pending[old][i]);
		if (pc->ctx->proc_listener)
			pc->ctx->proc_listener(pc->ctx->proc_listener_ctx, pc->pending[old][i], true);
	}
	pc->nr_pending[old] = 0;
	pc->cur = old;
}

void proc_collector__free(struct proc_collector *pc)
{
	if (!pc)
		return;
	proc_bpf__destroy(pc->skel);
	free(pc);
}

void proc_collector__stats(struct proc_collector *pc, struct proc_collector_stats *out)
{
	unsigned long long c[PROC_CNT__MAX] = { 0 };

	collect__read_counters(bpf_map__fd(pc->skel->maps.proc_counters), c, PROC_CNT__MAX);
	out->execs = c[PROC_CNT_EXEC];
	out->exits = c[PROC_CNT_EXIT];
	out->dropped = c[PROC_CNT_DROP_RINGBUF];
	out->exec_tables = c[PROC_CNT_EXEC_TABLES];
}
