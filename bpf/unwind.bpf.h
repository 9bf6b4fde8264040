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
 * Frames with no unwind info (JIT code, files without tables or evicted ones) follow the
 * frame pointer; a stack that cannot be followed to its outermost frame is reported truncated
 * rather than continued with guesses. So is one that reaches code whose rules are not known
 * yet: a file whose table is being built, a pc outside the mappings last read, a process not
 * learned yet (its leaf alone).
 */
#include <bpf/bpf_core_read.h>

#include "helpers.bpf.h"
#include "unwind_abi.h"
#include "unwind_vma.bpf.h"
#include "unwind_jit.bpf.h"

#define UNWIND_ENOENT 2 /* bpf_find_vma(): no mapping holds the address */

/* The rows and page index, chunk by chunk (bpf/unwind_abi.h): every chunk has this shape. */
struct unwind_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UNWIND_CHUNK_ELEMS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct unwind_chunk);
} unwind_chunks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_file);
} unwind_files SEC(".maps");

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

/*
 * The walk cache (bpf/unwind_abi.h), for samplers whose loader sets unwind_cache (and gives the map
 * its UNWIND_CACHE_ENTRIES entries: unwinder__cache_walks). In the others the verifier drops
 * every use of it, known false, so their walks pay nothing for it. Per CPU and per object, so that one walk at a time uses the
 * entries and the per-CPU state below: only the on-CPU sampler has them, whose perf_event
 * program never runs preemptibly nor nests in itself. (The off-CPU sampler walks in a task
 * work, the memory sampler in uprobes: both can be preempted mid-walk by another walk on the
 * same CPU, which would take over the per-CPU state.)
 */
const volatile bool unwind_cache = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_cache_entry);
} unwind_cache_entries SEC(".maps");

enum unwind_cache_state {
	UNWIND_CACHE_OFF = 0, /* not claimed: neither read nor written */
	UNWIND_CACHE_FOLLOW,  /* the walk's frames so far are the entry's */
	UNWIND_CACHE_WRITE,   /* the walk left them: the frames it finds replace the rest */
};

/* The walk's use of the cache. In a map, not in the walk's state, like unwind_hint: the
 * verifier would otherwise tell apart steps by it and never see the walk's steps converge. */
struct unwind_cache_walk {
	__u32 slot;  /* the entry, once frame 1 picked it */
	__u32 state; /* enum unwind_cache_state */
	__u64 hits;  /* frames whose rule came from the entry */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_cache_walk);
} unwind_cache_walk SEC(".maps");

/* What a BPF walk keeps beyond bpf/unwind_step.h's: pending uretprobes replaced return
 * addresses on the stack with their trampoline; the kernel's list of them (innermost first)
 * gives the real ones back, in walk order. And what its walk cache entry is filed under. */
struct unwind_walk_env {
	__u64 tramp; /* the trampoline's address, 0: no uretprobe pending in this thread */
	__u64 ri;    /* struct return_instance * of the next one the walk will meet */
	__u64 gen;   /* the process's mapping table's */
	__u32 pid;
	__u32 pad;
};

/* The return address a pending uretprobe hijacked, given back (ra otherwise). */
static __always_inline __u64 unwind__ret_addr(struct unwind_walk_env *e, __u64 ra)
{
	for (int k = 0; k < 2 && e->tramp && ra == e->tramp && e->ri; k++) {
		struct return_instance *ri = (struct return_instance *)e->ri;

		/* A chained instance's own return address is the trampoline again: the next. */
		ra = BPF_CORE_READ(ri, orig_ret_vaddr);
		e->ri = (__u64)BPF_CORE_READ(ri, next);
	}
	return ra;
}

/* Where a thread with pending uretprobes has them (e->tramp stays 0 for the others). */
static __always_inline void unwind__uretprobes(struct unwind_walk_env *e)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct uprobe_task *ut = BPF_CORE_READ(task, utask);
	struct xol_area *area;

	if (!ut)
		return;
	e->ri = (__u64)BPF_CORE_READ(ut, return_instances);
	if (!e->ri)
		return;
	area = BPF_CORE_READ(task, mm, uprobes_state.xol_area);
	e->tramp = area ? BPF_CORE_READ(area, vaddr) : 0;
}

static __always_inline void unwind__count(__u32 idx, __u64 n)
{
	counters__add(&unwind_counters, idx, n);
}

static __always_inline __u32 *unwind__hint(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&unwind_hint, &zero);
}

/* Element idx of the rows and page index, or NULL: a chunk not made yet, or past the end.
 * (Both lookups are inlined by the verifier: a load of the chunk's pointer, then arithmetic.) */
static __always_inline const void *unwind__elem(__u32 idx)
{
	__u32 c = idx >> UNWIND_CHUNK_SHIFT, k = idx & (UNWIND_CHUNK_ELEMS - 1);
	void *chunk = bpf_map_lookup_elem(&unwind_chunks, &c);

	return chunk ? bpf_map_lookup_elem(chunk, &k) : NULL;
}

static __always_inline int unwind__read(__u64 *dst, __u64 addr)
{
	return bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}

static __always_inline struct unwind_cache_walk *unwind__cache_walk(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&unwind_cache_walk, &zero);
}

/*
 * The cache's three steps are global functions, verified once each on their own and seen by
 * the walk as calls that return an unknown word: the walk's states are the same with or
 * without a hit, so the verifier's work on the step does not double.
 */

/* No rule of frame i or past it is to be cached. */
__noinline int unwind__cache_stop(void)
{
	struct unwind_cache_walk *cw = unwind__cache_walk();

	if (cw)
		cw->state = UNWIND_CACHE_OFF;
	return 0;
}

/* The cached rule of frame i at pc (UNWIND_RULE()), or UNWIND_RULE_NONE. At frame 1 the walk
 * takes the entry of (pid, pc), following it if it is the same process's table. */
__noinline __u64 unwind__cache_get(__u64 i, __u64 pc, __u32 interrupted, __u32 pid, __u64 gen)
{
	struct unwind_cache_walk *cw;
	struct unwind_cache_entry *e;
	__u64 k, rule;

	/* The leaf is always looked up: leaf pcs are many, their callers few. */
	if (i == 0)
		return UNWIND_RULE_NONE;
	cw = unwind__cache_walk();
	if (!cw)
		return UNWIND_RULE_NONE;
	if (i == 1) {
		__u64 h = (pc ^ ((__u64)pid << 32)) * 0x9e3779b97f4a7c15ULL;

		cw->slot = (__u32)(h >> 32) % UNWIND_CACHE_ENTRIES;
		e = bpf_map_lookup_elem(&unwind_cache_entries, &cw->slot);
		if (!e)
			return UNWIND_RULE_NONE;
		if (e->pid != pid || e->gen != gen || !e->nr || e->f[0].pc != pc) {
			e->pid = pid;
			e->gen = gen;
			e->nr = 0;
			cw->state = UNWIND_CACHE_WRITE;
			return UNWIND_RULE_NONE;
		}
		cw->state = UNWIND_CACHE_FOLLOW;
	}
	if (cw->state != UNWIND_CACHE_FOLLOW)
		return UNWIND_RULE_NONE;
	e = bpf_map_lookup_elem(&unwind_cache_entries, &cw->slot);
	if (!e)
		return UNWIND_RULE_NONE;
	k = i - 1;
	if (k >= UNWIND_CACHE_FRAMES || k >= e->nr)
		goto leave;
	rule = e->f[k].rule;
	if (e->f[k].pc != pc || !(rule & UNWIND_CACHE_INTERRUPTED) != !interrupted)
		goto leave;
	cw->hits++;
	return rule & ~UNWIND_CACHE_INTERRUPTED;
leave:
	/* Another stack from here on (or past the entry's end): this walk's frames replace the
	 * entry's rest. */
	if (k < e->nr)
		e->nr = k;
	cw->state = UNWIND_CACHE_WRITE;
	return UNWIND_RULE_NONE;
}

/* Frame i at pc has rule: after the entry's last frame, it is added. */
__noinline int unwind__cache_put(__u64 i, __u64 pc, __u32 interrupted, __u64 rule)
{
	struct unwind_cache_walk *cw;
	struct unwind_cache_entry *e;
	__u64 k;

	if (i == 0)
		return 0;
	cw = unwind__cache_walk();
	if (!cw || cw->state != UNWIND_CACHE_WRITE)
		return 0;
	e = bpf_map_lookup_elem(&unwind_cache_entries, &cw->slot);
	if (!e)
		return 0;
	k = i - 1;
	if (k >= UNWIND_CACHE_FRAMES || k != e->nr)
		return 0;
	e->f[k].pc = pc;
	e->f[k].rule = rule | (interrupted ? UNWIND_CACHE_INTERRUPTED : 0);
	e->nr = k + 1;
	return 0;
}

/*
 * The searches are global functions: the verifier checks each once, on its own, instead of
 * once per path through the caller (their halvings would multiply the caller's states).
 */
#define UNWIND_SEARCH __noinline
#define UNWIND_HINT() unwind__hint()
#define UNWIND_FILE(slot)                                                                  \
	((const struct unwind_file *)bpf_map_lookup_elem(&unwind_files, &(slot)))
#define UNWIND_PAGE(e) ((const struct unwind_page_pair *)unwind__elem(e))
#define UNWIND_ROW(idx) ((const struct unwind_row *)unwind__elem(idx))
#define UNWIND_READ(w, dst, addr) unwind__read(dst, addr)
#define UNWIND_RET_ADDR(w, ra) unwind__ret_addr(&(w)->env, ra)
#define UNWIND_DEPTH(w) UNWIND_MAX_FRAMES
#define UNWIND_CACHE_GET(w, i)                                                             \
	(unwind_cache ? unwind__cache_get(i, (w)->pc, (w)->interrupted, (w)->env.pid,      \
					  (w)->env.gen) :                                  \
			UNWIND_RULE_NONE)
#define UNWIND_CACHE_PUT(w, i, rule)                                                       \
	(unwind_cache ? unwind__cache_put(i, (w)->pc, (w)->interrupted, rule) : 0)
/* (A frame found this way stops the cache: its mapping is in no published table's gen.) */
#define UNWIND_VMA(w, pc) unwind__vma(pc, &(w)->vma)
#define UNWIND_AFTER_SYSCALL(w) unwind__after_syscall((w)->pc)
#define UNWIND_KERNEL_TABLE(w) ((w)->env.gen >> 63)

__noinline int unwind__vma(__u64 pc, struct unwind_mapping *out);

/*
 * A frame of a JVM's interpreter code, [lo, hi): its word (UNWIND_FRAME_JAVA with the Method
 * its frame holds, 0 when unreadable), else 0. A global function: the verifier checks it once.
 */
__noinline __u64 unwind__java_frame(__u64 lo, __u64 hi, __u64 pc, __u64 bp)
{
	__u64 method = 0;

	if (pc < lo || pc >= hi || !bp)
		return 0;
	if (bpf_probe_read_user(&method, sizeof(method), (void *)(bp - UNWIND_JAVA_METHOD_SLOT)) ||
	    method >= UNWIND_FRAME_JAVA)
		method = 0;
	return UNWIND_FRAME_JAVA | method;
}
#define UNWIND_JAVA_FRAME(w, lo, hi) unwind__java_frame(lo, hi, (w)->pc, (w)->bp)

/* Whether the instruction before pc is a syscall (0f 05). */
static __always_inline bool unwind__after_syscall(__u64 pc)
{
	__u8 insn[2];

	return pc >= 2 && !bpf_probe_read_user(insn, sizeof(insn), (const void *)(pc - 2)) &&
	       insn[0] == 0x0f && insn[1] == 0x05;
}
#define UNWIND_CACHE_STOP(w) (unwind_cache ? unwind__cache_stop() : 0)

#include "unwind_step.h"

/*
 * A leaf in JIT code (mapped by no file: LuaJIT's traces), whose runtime said which frame
 * entered it (bpf/unwind_jit.bpf.h): the walk starts at that frame's caller. Trace code has no
 * unwind info and keeps no frame pointer; nothing lies between the two but the trace itself,
 * whose Lua frames the runtime's walk gives. So does a leaf in the runtime's own code ([x->lo,
 * x->hi)): a helper the trace called, whose table walk would lead into the trace; one beyond
 * (libc's, under a helper) is walked as before, into the trace, and ends there, truncated. Or
 * a leaf anywhere, when the runtime said (x->any_leaf: its own helper, which its rows
 * misdescribe). The leaf itself is not kept: the runtime's frames give way to its own anyway.
 * The pc stays taken as interrupted: a return address past a call inside its function has
 * the call's row.
 * Here, before the walk, not in its step: a branch there cost the verifier 400k more
 * instructions of the on-CPU program.
 */
static __always_inline void unwind__jit_exit(struct unwind_walk *w)
{
	struct unwind_jit_exit *x = unwind__jit_slot();
	int idx;

	if (!x || x->sp <= w->sp)
		return;
	if (!x->any_leaf && (w->pc < x->lo || w->pc >= x->hi)) {
		idx = unwind__find_mapping(w->proc, w->pc);
		if (idx >= 0 &&
		    w->proc->maps[(__u32)idx & (UNWIND_MAX_MAPPINGS - 1)].file != UNWIND_NO_FILE)
			return;
	}
	w->pc = x->pc;
	w->sp = x->sp;
	w->bp = x->bp;
	unwind__count(UNWIND_CNT_FRAMES_JIT_EXIT, 1);
}

/* Whether the current task is inside execve (from its start, before the point of no return). */
static __always_inline bool unwind__in_execve(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (!bpf_core_field_exists(task->in_execve))
		return false;
	return BPF_CORE_READ_BITFIELD(task, in_execve);
}

/*
 * The mapping holding pc as the kernel has it, into *out (the walk's last, or zeros), when its
 * file has a slot: 0, UNWIND_VMA_NONE when the address space maps nothing there, or -1.
 * (A pc outside every mapping user space published: a library mapped since it read the maps,
 * a process it has not learned yet. The walk goes on where the table is built.) A global
 * function: the verifier checks it once, and the step sees only its answer.
 */
__noinline int unwind__vma(__u64 pc, struct unwind_mapping *out)
{
	struct unwind_mapping m = { .file = UNWIND_NO_FILE };
	long err;

	if (!out)
		return -1;
	/* In the one found last: a library's frames follow each other, and in an interrupt
	 * (the on-CPU sampler) the lock can be taken once per sample. */
	if (out->len && pc - out->start < out->len)
		return 0;
	err = bpf_find_vma(bpf_get_current_task_btf(), pc, unwind__vma_cb, &m, 0);
	if (err == -UNWIND_ENOENT)
		return UNWIND_VMA_NONE;
	if (err || m.file == UNWIND_NO_FILE) {
		/* In execve: the old image's registers with the lock out of reach (-EBUSY: the
		 * exec is mapping the new one), or before the point of no return a vfork child's
		 * code its parent maps, which is as much the exec's own start. */
		return unwind__in_execve() ? UNWIND_VMA_NONE : -1;
	}
	*out = m;
	return 0;
}

/*
 * Whether the registers at pc are an image's that an exec in progress has replaced: the
 * thread is in execve and its address space maps nothing at pc (or it cannot be told, the exec
 * holding the lock). Before the exec's point of no return pc is mapped, and walked. A global
 * function: the verifier checks it once, and the walk sees an unknown answer.
 */
__noinline int unwind__exec_gone(__u64 pc)
{
	struct unwind_mapping m = { .file = UNWIND_NO_FILE };

	if (!unwind__in_execve())
		return 0;
	return bpf_find_vma(bpf_get_current_task_btf(), pc, unwind__vma_cb, &m, 0) != 0;
}

/*
 * Frame i of a walk by a table BPF published (UNWIND_GEN_KERNEL: a process user space has not
 * learned, a quiet executable's maybe never) as its file and offset, as the kernel's mappings
 * give them: user space names such a stack without reading the process's maps, which is most
 * of what an exec cost it under churn. A bpf_loop() callback, after the walk: the step's own
 * paths are left as the verifier knows them.
 */
static long unwind__file_frame(__u64 i, void *arg)
{
	struct unwind_walk *w = arg;
	const struct unwind_mapping *m;
	__u64 f;
	int idx;

	if (i >= UNWIND_MAX_FRAMES || i >= w->n)
		return 1;
	f = w->stack[i];
	if (f & (UNWIND_FRAME_FILE | UNWIND_FRAME_JAVA))
		return 0;
	/* A return address (past the leaf) may be the first byte past its call's mapping. */
	idx = unwind__find_mapping(w->proc, f - (i > 0));
	if (idx < 0 || !w->proc)
		return 0;
	m = &w->proc->maps[(__u32)idx & (UNWIND_MAX_MAPPINGS - 1)];
	if (m->file != UNWIND_NO_FILE)
		w->stack[i] = UNWIND_FRAME(m->file, f - m->start + m->file_off);
	return 0;
}

/* How a walk went, beyond the frames it wrote. */
struct unwind_outcome {
	bool truncated;	  /* stopped before the outermost frame */
	bool miss;	  /* a pc outside the process's known mappings: its maps must be read again
			   * (no_proc: the walk was cut; a whole one came as files and offsets) */
	bool no_proc;	  /* no mapping table yet: walked through the kernel's mappings, or (a
			   * return of -1) stack[0] holds the leaf alone */
	bool gone;	  /* no user stack: the registers are an image's that an exec replaced
			   * (a return of 0) */
	__u32 proc_flags; /* the process's enum unwind_proc_flags */
};

/*
 * Walks the user stack of the current process from its registers into stack[0,
 * UNWIND_MAX_FRAMES), which must have that many slots. Returns the number of frames written
 * (and fills *out), or -1 when nothing could be walked for a process with no table yet
 * (out->no_proc, the leaf in stack[0]: the caller keeps it alone, truncated, or falls back to
 * frame pointers). jit_exit: the caller's runtime walk may have said where JIT code was
 * entered from (the on-CPU sampler's; a constant, so that other walkers carry none of it).
 */
static __always_inline long unwind__user_stack(__u32 pid, __u64 pc, __u64 sp, __u64 bp,
					       bool jit_exit, __u64 *stack,
					       struct unwind_outcome *out)
{
	struct unwind_walk w = {
		.pc = pc,
		.sp = sp,
		.bp = bp,
		.stack = stack,
		.interrupted = 1,
	};
	struct unwind_cache_walk *cw;
	__u32 no_proc = 0;
	__u32 cnt;

	/*
	 * Not learned yet (a process exec'd a moment ago, and proc.bpf.c found no executable to
	 * publish): walked by the empty table user space keeps under UNWIND_NO_PROC_KEY, through
	 * the kernel's mappings as far as files whose tables are built go; user space is hurried.
	 * One table lookup and one shape of walk for the verifier either way (its gen's top bit
	 * says, after the walk): a flag would double what it checks of the step, near its limit.
	 */
	/* The table (a forked child's copy of its parent's, user space's of the old image) would
	 * take the old image's pc for one it still has. */
	if (unwind__exec_gone(pc)) {
		unwind__count(UNWIND_CNT_STACKS, 1);
		unwind__count(UNWIND_CNT_IMAGE_GONE, 1);
		out->gone = true;
		return 0;
	}
	w.proc = bpf_map_lookup_elem(&unwind_procs, &pid);
	if (!w.proc) {
		__u32 none = UNWIND_NO_PROC_KEY;

		w.proc = bpf_map_lookup_elem(&unwind_procs, &none);
		if (!w.proc)
			goto leaf;
	}
	w.env.pid = pid;
	w.env.gen = w.proc->gen;
	cw = unwind_cache ? unwind__cache_walk() : NULL;
	if (cw)
		*cw = (struct unwind_cache_walk){};
	unwind__uretprobes(&w.env);
	if (jit_exit)
		unwind__jit_exit(&w);
	bpf_loop(UNWIND_MAX_FRAMES + 1, unwind__step, &w, 0);
	/* In execve, a leaf no table or mapping knows: the old image's registers with its mapping
	 * gone, or out of the kernel's reach while the exec holds the mapping lock. */
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
	case UNWIND_STOP_PENDING:
		cnt = UNWIND_CNT_TRUNC_PENDING;
		break;
	case UNWIND_STOP_NOROOM:
		cnt = UNWIND_CNT_TRUNC_NOROOM;
		break;
	case UNWIND_STOP_GONE:
		cnt = UNWIND_CNT_IMAGE_GONE;
		break;
	default:
		cnt = UNWIND_CNT_TRUNC_DEPTH;
		break;
	}
	unwind__count(UNWIND_CNT_STACKS, 1);
	unwind__count(cnt, 1);
	unwind__count(UNWIND_CNT_FRAMES_TABLE, w.table_frames);
	unwind__count(UNWIND_CNT_FRAMES_FP, w.fp_frames);
	if (cw)
		unwind__count(UNWIND_CNT_FRAMES_CACHED, cw->hits);
	/* A table not user space's (UNWIND_GEN_KERNEL): it is hurried, unless its frames need
	 * none of its maps (unwind__file_frame): a whole stack of them. */
	no_proc = !!(w.proc->gen & UNWIND_GEN_KERNEL);
	unwind__count(UNWIND_CNT_NO_PROC, no_proc);
	unwind__count(UNWIND_CNT_MAPPING_MISS, w.miss | no_proc);
	out->truncated = cnt != UNWIND_CNT_COMPLETE;
	out->miss = no_proc ? out->truncated : w.miss;
	if (no_proc && w.n)
		bpf_loop(w.n, unwind__file_frame, &w, 0);
	/* Without user space's table, what it would say is not known: the lookups it would
	 * spare are made. */
	out->proc_flags = w.proc->flags |
			  (-no_proc & UNWIND_PROC_INTERP);
	out->no_proc = no_proc;
	if (w.stop == UNWIND_STOP_GONE) {
		out->gone = true;
		out->truncated = false;
		return 0;
	}
	if (w.n)
		return w.n;
leaf:
	/* Not even the leaf (no walk ran): the leaf alone, truncated, rather than a
	 * frame-pointer guess at code whose tables are on their way. */
	stack[0] = pc;
	out->no_proc = true;
	out->truncated = true;
	out->proc_flags = UNWIND_PROC_INTERP;
	return -1;
}

#endif
