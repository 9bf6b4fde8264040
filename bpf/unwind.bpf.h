/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_UNWIND_BPF_H
#define AUTOPROF_BPF_UNWIND_BPF_H

/*
 * Table unwinding of x86-64 user stacks, for every sampler (included by its .bpf.c). The maps
 * are created once by user space (src/unwind/unwind.c) and shared by every program through
 * bpf_map__reuse_fd; the sizes here are placeholders.
 *
 * One frame per bpf_loop() iteration: the verifier checks the step once, whatever the depth, so
 * a whole stack of UNWIND_MAX_FRAMES frames is walked by one program (no tail calls needed).
 * Frames with no unwind info (JIT code, Go, files without tables or evicted ones) follow the
 * frame pointer; a stack that cannot be followed to its outermost frame is reported truncated
 * rather than continued with guesses.
 */
#include <bpf/bpf_core_read.h>

#include "unwind.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_file);
} unwind_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNWIND_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} unwind_counters SEC(".maps");

/*
 * The mapping the last frame on this CPU was in: a caller is usually in its callee's file, and
 * checking that one first spares the search its cold lines. Kept in a map, not in the walk's
 * state, so that the verifier sees the same state at every step. Each object has its own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_hint SEC(".maps");

/* Enough halvings for 2^24 rows and UNWIND_MAX_MAPPINGS mappings. */
#define UNWIND_ROW_STEPS 24
#define UNWIND_MAP_STEPS 9

/* Offsets in the kernel's rt_sigframe at the handler's return into __restore_rt: the return
 * popped pretcode, so rsp points at the ucontext, whose mcontext (struct sigcontext) starts 40
 * bytes in. */
#define UNWIND_SIG_RBP (40 + 80)
#define UNWIND_SIG_RSP (40 + 120)
#define UNWIND_SIG_RIP (40 + 128)

enum unwind_stop {
	UNWIND_GO_ON = 0,
	UNWIND_STOP_COMPLETE,
	UNWIND_STOP_DEPTH,
	UNWIND_STOP_READ,
	UNWIND_STOP_RULE,
	UNWIND_STOP_NOINFO,
};

struct unwind_walk {
	__u64 pc, sp, bp;
	__u64 *stack; /* UNWIND_MAX_FRAMES slots for the user frames */
	struct unwind_proc *proc;
	__u32 n;      /* user frames written */
	__u32 stop;   /* enum unwind_stop */
	__u32 interrupted; /* pc was interrupted, not a return address (leaf, after a signal) */
	__u32 miss;
	__u32 table_frames, fp_frames;
	/* Pending uretprobes replaced return addresses on the stack with their trampoline: the
	 * kernel's list of them (innermost first) gives the real ones back, in walk order. */
	__u64 tramp; /* the trampoline's address, 0: no uretprobe pending in this thread */
	__u64 ri;    /* struct return_instance * of the next one the walk will meet */
};

/* The return address a pending uretprobe hijacked, given back (ra otherwise). */
static __always_inline __u64 unwind__ret_addr(struct unwind_walk *w, __u64 ra)
{
	for (int k = 0; k < 2 && w->tramp && ra == w->tramp && w->ri; k++) {
		struct return_instance *ri = (struct return_instance *)w->ri;

		/* A chained instance's own return address is the trampoline again: the next. */
		ra = BPF_CORE_READ(ri, orig_ret_vaddr);
		w->ri = (__u64)BPF_CORE_READ(ri, next);
	}
	return ra;
}

/* Where a thread with pending uretprobes has them (w->tramp stays 0 for the others). */
static __always_inline void unwind__uretprobes(struct unwind_walk *w)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct uprobe_task *ut = BPF_CORE_READ(task, utask);
	struct xol_area *area;

	if (!ut)
		return;
	w->ri = (__u64)BPF_CORE_READ(ut, return_instances);
	if (!w->ri)
		return;
	area = BPF_CORE_READ(task, mm, uprobes_state.xol_area);
	w->tramp = area ? BPF_CORE_READ(area, vaddr) : 0;
}

static __always_inline void unwind__count(__u32 idx, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&unwind_counters, &idx);

	if (c)
		*c += n;
}

/*
 * The searches are global functions: the verifier checks each once, on its own, instead of
 * once per path through the caller (their halvings would multiply the caller's states).
 */

/* Index of the mapping holding pc, or -1. */
__noinline int unwind__find_mapping(const struct unwind_proc *proc, __u64 pc)
{
	__u32 lo = 0, hi, zero = 0, *hint = bpf_map_lookup_elem(&unwind_hint, &zero);

	if (!proc)
		return -1;
	hi = proc->nr;
	if (hint && *hint < hi && *hint < UNWIND_MAX_MAPPINGS) {
		const struct unwind_mapping *m = &proc->maps[*hint];

		if (pc >= m->start && pc - m->start < m->len)
			return *hint;
	}
	if (hi > UNWIND_MAX_MAPPINGS)
		hi = UNWIND_MAX_MAPPINGS;
	for (int i = 0; i < UNWIND_MAP_STEPS && lo < hi; i++) {
		__u32 mid = (lo + hi) / 2;
		const struct unwind_mapping *m;

		if (mid >= UNWIND_MAX_MAPPINGS)
			return -1;
		m = &proc->maps[mid];
		if (pc < m->start) {
			hi = mid;
		} else if (pc - m->start >= m->len) {
			lo = mid + 1;
		} else {
			if (hint)
				*hint = mid;
			return mid;
		}
	}
	return -1;
}

/* Index in unwind_rows of the file's last row at or before off, or -1. */
__noinline int unwind__find_row(const struct unwind_file *f, __u32 off)
{
	__u32 page, k, lo, hi, *p;

	if (!f || !f->row_count)
		return -1;
	page = off >> UNWIND_PAGE_SHIFT;
	if (page < f->first_page)
		return -1;
	k = page - f->first_page;
	hi = f->row_start + f->row_count;
	if (k >= f->page_count) {
		/* Past the last row's page: the last row rules (it closes the file's code). */
		lo = hi - 1;
	} else {
		k += f->page_start;
		p = bpf_map_lookup_elem(&unwind_pages, &k);
		if (!p)
			return -1;
		lo = *p;
		if (k + 1 < f->page_start + f->page_count) {
			k++;
			p = bpf_map_lookup_elem(&unwind_pages, &k);
			if (!p)
				return -1;
			/* The row covering the next page's first byte may start there. */
			hi = *p + 1;
		}
	}
	/* The answer is in [lo, hi) unless off is before the file's first row. */
	{
		__u32 start = lo;

		for (int i = 0; i < UNWIND_ROW_STEPS && lo < hi; i++) {
			__u32 mid = lo + (hi - lo) / 2;
			const struct unwind_row *r = bpf_map_lookup_elem(&unwind_rows, &mid);

			if (!r)
				return -1;
			if (r->pc <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo == start ? -1 : (int)(lo - 1);
	}
}

static __always_inline int unwind__read(__u64 *dst, __u64 addr)
{
	return bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}

/* Follows the frame pointer: the caller's rbp at [rbp], its return address above it. */
static __always_inline void unwind__fp_step(struct unwind_walk *w)
{
	__u64 ra, bp;

	if (!w->bp) {
		/* The ABI's outermost frame has rbp 0; for code we have no info for, this is
		 * as far as anyone can go. */
		w->stop = w->n == 1 && !w->fp_frames && !w->table_frames ? UNWIND_STOP_NOINFO :
									   UNWIND_STOP_COMPLETE;
		return;
	}
	if (w->bp < w->sp || unwind__read(&ra, w->bp + 8) || unwind__read(&bp, w->bp)) {
		w->stop = UNWIND_STOP_READ;
		return;
	}
	w->sp = w->bp + 16;
	w->bp = bp;
	w->pc = unwind__ret_addr(w, ra);
	w->interrupted = 0;
	w->fp_frames++;
}

/* One frame: iteration i writes frame i (so i, not a count of ours, indexes the array: the
 * verifier sees the same state every iteration). */
static long unwind__step(__u64 i, void *arg)
{
	struct unwind_walk *w = arg;
	const struct unwind_mapping *m;
	const struct unwind_file *f;
	const struct unwind_row *r;
	__u64 cfa, ra, bp, off;
	__u32 slot;
	int idx;

	if (!w->pc) {
		w->stop = UNWIND_STOP_COMPLETE;
		return 1;
	}
	if (i >= UNWIND_MAX_FRAMES) {
		w->stop = UNWIND_STOP_DEPTH;
		return 1;
	}
	/* Consumers step every frame past the leaf back by one byte, into the call: a pc that
	 * was interrupted (after a signal frame) is already in place, so it is stored one on. */
	w->stack[i] = w->pc + (w->interrupted && i > 0);
	w->n = i + 1;

	idx = unwind__find_mapping(w->proc, w->pc);
	if (idx < 0) {
		w->miss = 1;
		goto fp;
	}
	/* A no-op (the search returns an index below the size) the verifier can see. */
	m = &w->proc->maps[(__u32)idx & (UNWIND_MAX_MAPPINGS - 1)];
	slot = m->file;
	if (slot == UNWIND_NO_FILE)
		goto fp;
	f = bpf_map_lookup_elem(&unwind_files, &slot);
	if (!f || !f->row_count)
		goto fp;
	/* A return address is past the call, maybe past the function's end (noreturn calls):
	 * its rule is the one of the call instruction. */
	off = w->pc - m->start + m->file_off - !w->interrupted;
	idx = unwind__find_row(f, (__u32)off);
	if (idx < 0)
		goto fp;
	slot = idx;
	r = bpf_map_lookup_elem(&unwind_rows, &slot);
	if (!r)
		goto fp;

	switch (r->cfa_type) {
	case UNWIND_CFA_UNDEFINED:
		w->stop = UNWIND_STOP_COMPLETE;
		return 1;
	case UNWIND_CFA_RSP:
		cfa = w->sp + r->cfa_off;
		break;
	case UNWIND_CFA_RBP:
		if (!w->bp) {
			w->stop = UNWIND_STOP_READ;
			return 1;
		}
		cfa = w->bp + r->cfa_off;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + 8 + ((w->pc & 15) >= (__u64)r->cfa_off ? 8 : 0);
		break;
	case UNWIND_CFA_SIGNAL:
		/* The interrupted context: the next pc is where the signal struck, not a return
		 * address. */
		if (unwind__read(&ra, w->sp + UNWIND_SIG_RIP) ||
		    unwind__read(&cfa, w->sp + UNWIND_SIG_RSP) ||
		    unwind__read(&bp, w->sp + UNWIND_SIG_RBP)) {
			w->stop = UNWIND_STOP_READ;
			return 1;
		}
		/* The trampoline was entered by a return, not a call: name its own address. */
		w->stack[i] = w->pc + 1;
		w->pc = ra;
		w->sp = cfa;
		w->bp = bp;
		w->interrupted = 1;
		w->table_frames++;
		return 0;
	case UNWIND_CFA_NONE:
		goto fp;
	default:
		w->stop = UNWIND_STOP_RULE;
		return 1;
	}
	/* The stack grows down: a caller's frame is above its callee's. */
	if (cfa <= w->sp || unwind__read(&ra, cfa - 8)) {
		w->stop = UNWIND_STOP_READ;
		return 1;
	}
	if (r->rbp_type == UNWIND_RBP_OFFSET) {
		if (unwind__read(&bp, cfa + r->rbp_off)) {
			w->stop = UNWIND_STOP_READ;
			return 1;
		}
		w->bp = bp;
	} else if (r->rbp_type != UNWIND_RBP_SAME) {
		w->bp = 0;
	}
	w->sp = cfa;
	w->pc = unwind__ret_addr(w, ra);
	w->interrupted = 0;
	w->table_frames++;
	return 0;
fp:
	unwind__fp_step(w);
	return w->stop != UNWIND_GO_ON;
}

/* How a walk went, beyond the frames it wrote. */
struct unwind_outcome {
	bool truncated;	  /* stopped before the outermost frame */
	bool miss;	  /* a pc outside the process's known mappings: its maps must be read again */
	__u32 proc_flags; /* the process's enum unwind_proc_flags */
};

/*
 * Walks the user stack of the current process from its registers into stack[0,
 * UNWIND_MAX_FRAMES), which must have that many slots. Returns the number of frames written
 * (and fills *out), or -1 when the process has no table yet (the caller falls back to
 * bpf_get_stack's frame-pointer walk).
 */
static __always_inline long unwind__user_stack(__u32 pid, __u64 pc, __u64 sp, __u64 bp,
					       __u64 *stack, struct unwind_outcome *out)
{
	struct unwind_walk w = {
		.pc = pc,
		.sp = sp,
		.bp = bp,
		.stack = stack,
		.interrupted = 1,
	};
	__u32 cnt;

	w.proc = bpf_map_lookup_elem(&unwind_procs, &pid);
	if (!w.proc) {
		unwind__count(UNWIND_CNT_NO_PROC, 1);
		return -1;
	}
	unwind__uretprobes(&w);
	bpf_loop(UNWIND_MAX_FRAMES + 1, unwind__step, &w, 0);
	switch (w.stop) {
	case UNWIND_STOP_COMPLETE:
		cnt = UNWIND_CNT_COMPLETE;
		break;
	case UNWIND_STOP_READ:
		cnt = UNWIND_CNT_TRUNC_READ;
		break;
	case UNWIND_STOP_RULE:
		cnt = UNWIND_CNT_TRUNC_RULE;
		break;
	case UNWIND_STOP_NOINFO:
		cnt = UNWIND_CNT_TRUNC_NOINFO;
		break;
	default:
		cnt = UNWIND_CNT_TRUNC_DEPTH;
		break;
	}
	unwind__count(UNWIND_CNT_STACKS, 1);
	unwind__count(cnt, 1);
	unwind__count(UNWIND_CNT_FRAMES_TABLE, w.table_frames);
	unwind__count(UNWIND_CNT_FRAMES_FP, w.fp_frames);
	if (w.miss)
		unwind__count(UNWIND_CNT_MAPPING_MISS, 1);
	out->truncated = cnt != UNWIND_CNT_COMPLETE;
	out->miss = w.miss;
	out->proc_flags = w.proc->flags;
	return w.n;
}

#endif
