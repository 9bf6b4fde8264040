// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory profiling, attach mode: uprobes on the allocator functions of target processes.
 *
 * A uprobe costs ~0.6 us per hit on an instruction the kernel emulates and ~12 us on one it must
 * single-step, so user space places each probe on a cheap instruction and every program here
 * does as little as it can per call. Sampling is by bytes, per thread, as tcmalloc and Go do:
 * each thread counts down a random interval (exponential, mean `mean_interval` bytes) and the
 * allocation that crosses zero is sampled. Only sampled allocations capture a stack (at the
 * return probe, where the returned pointer is known) and enter the table of live sampled
 * allocations; a free costs one hash lookup unless it frees a sampled allocation. A sampled
 * allocation of a CPython process carries the thread's Python frames too.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "memory_abi.h"

/* Mean sampling interval in bytes; 1 samples every allocation. */
const volatile __u64 mean_interval = 512 * 1024;
/* Multipliers of mean_interval (<< MEMORY_EXP_SHIFT): -ln(u) at MEMORY_EXP_TABLE quantiles. */
const volatile __u32 exp_table[MEMORY_EXP_TABLE] = { 1 };
const volatile bool unwind_tables = true;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized before load */
} memory_events SEC(".maps");

#include "unwind.bpf.h"
#include "interp.bpf.h"
#include "ustack.bpf.h"

/* Live sampled allocations of every target process; sized by memory.max-live before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* grows with use: nothing without a target */
	__type(key, struct memory_key);
	__type(value, struct memory_live);
} memory_live SEC(".maps");

/*
 * One allocator call in flight per thread: the entry decides, the return completes. sp is the
 * stack pointer at the call's entry (where its return address is), so the return probe of the
 * same call finds it at sp + 8 and a call nested inside it (realloc(NULL, n) calling malloc)
 * is recognized by a lower sp.
 */
struct mem_thread {
	__s64 until_sample; /* bytes left before the next sampled allocation */
	__u64 call_sp;	    /* 0: no call in flight */
	__u64 size;
	__u64 arg;	    /* realloc's old pointer; posix_memalign's result pointer */
	__u32 fn;	    /* enum memory_fn */
	__u32 sampled;
	__u32 init;
	__u32 pad;
};

/* Task storage: created on a thread's first call, freed by the kernel when the thread exits. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mem_thread);
} memory_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MEMORY_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} memory_counters SEC(".maps");

/*
 * The alloc event is too big for the 512-byte BPF stack. Uprobe programs run preemptibly (on one
 * CPU throughout), so another thread's sampled allocation on this CPU can take over this buffer,
 * and python_frames, in the middle of ours: each takes a ticket from memory_seq (a
 * fetch-and-add) before it writes, and its event goes out only if the counter still holds that
 * ticket once the event is copied into the ring (bpf/offcpu.bpf.c does the same for its Python
 * frames). A sample lost to a race is counted; a mixed one would be a wrong stack.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct memory_alloc_event);
} memory_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} memory_seq SEC(".maps");

static __always_inline void count(__u32 idx)
{
	counters__add(&memory_counters, idx, 1);
}

static __always_inline __s64 next_interval(void)
{
	__u32 i = bpf_get_prandom_u32() & (MEMORY_EXP_TABLE - 1);
	__u64 v = (mean_interval * exp_table[i]) >> MEMORY_EXP_SHIFT;

	return v ? (__s64)v : 1;
}

/* The calling thread's state, made at its first call with an interval drawn; the call is
 * counted. NULL when the kernel has no room for it. */
static __always_inline struct mem_thread *thread_state(void)
{
	struct mem_thread *t = bpf_task_storage_get(&memory_threads, bpf_get_current_task_btf(),
						    0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!t)
		return NULL;
	count(MEMORY_CNT_CALLS);
	if (!t->init) {
		t->init = 1;
		t->until_sample = next_interval();
	}
	return t;
}

/* Counts size off the thread's interval: whether this allocation crossed it (then sampled,
 * counted, and the next interval drawn). */
static __always_inline bool draw(struct mem_thread *t, __u64 size)
{
	t->until_sample -= (__s64)size;
	if (t->until_sample > 0)
		return false;
	t->until_sample = next_interval();
	count(MEMORY_CNT_SAMPLED);
	return true;
}

/* Drops ptr from the live table; tells user space when it was a sampled allocation. */
static __always_inline void forget(__u32 pid, __u64 ptr)
{
	struct memory_key key = { .pid = pid, .ptr = ptr };
	struct memory_free_event ev = { .type = MEMORY_EV_FREE, .pid = pid, .ptr = ptr };

	if (bpf_map_delete_elem(&memory_live, &key))
		return;
	count(MEMORY_CNT_FREES_SAMPLED);
	if (bpf_ringbuf_output(&memory_events, &ev, sizeof(ev), BPF_RB_NO_WAKEUP))
		count(MEMORY_CNT_DROP_RINGBUF);
}

SEC("uprobe.multi")
int memory_entry(struct pt_regs *ctx)
{
	__u32 fn = bpf_get_attach_cookie(ctx) & 0xff;
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct mem_thread *t;
	__u64 size, arg = 0, sp = PT_REGS_SP(ctx);

	switch (fn) {
	case MEMORY_FN_FREE:
		arg = PT_REGS_PARM1(ctx);
		if (arg) {
			count(MEMORY_CNT_FREES);
			forget(pid, arg);
		}
		return 0;
	case MEMORY_FN_MALLOC:
	case MEMORY_FN_VALLOC:
		size = PT_REGS_PARM1(ctx);
		break;
	case MEMORY_FN_CALLOC:
		size = PT_REGS_PARM1(ctx) * PT_REGS_PARM2(ctx);
		break;
	case MEMORY_FN_REALLOC:
		arg = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM2(ctx);
		break;
	case MEMORY_FN_REALLOCARRAY:
		arg = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM2(ctx) * PT_REGS_PARM3(ctx);
		break;
	case MEMORY_FN_POSIX_MEMALIGN:
		arg = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM3(ctx);
		break;
	case MEMORY_FN_ALIGNED_ALLOC:
		size = PT_REGS_PARM2(ctx);
		break;
	case MEMORY_FN_MMAP:
		/* Files and small mappings are no heap: not an allocating call at all. */
		size = PT_REGS_PARM2(ctx);
		if (!(PT_REGS_PARM4(ctx) & MEMORY_MAP_ANONYMOUS) || size < MEMORY_MMAP_MIN)
			return 0;
		break;
	case MEMORY_FN_MUNMAP:
		/* A sampled mapping unmapped from its start: gone (a part of it: all of it). */
		arg = PT_REGS_PARM1(ctx);
		if (arg) {
			count(MEMORY_CNT_FREES);
			forget(pid, arg);
		}
		return 0;
	default:
		return 0;
	}

	t = thread_state();
	if (!t)
		return 0;
	/* Inside another probed call (its entry sp is above ours): that call accounts for it. */
	if (t->call_sp && sp < t->call_sp) {
		count(MEMORY_CNT_NESTED);
		return 0;
	}
	t->call_sp = sp;
	t->size = size;
	t->arg = arg;
	t->fn = fn;
	t->sampled = draw(t, size);
	return 0;
}

/* The stack of the allocating call from `at` into e; *python: worth walking Python frames. */
static __always_inline __u32 alloc_stack(struct pt_regs *ctx, const struct walk_start *at,
					 struct memory_alloc_event *e, bool *python)
{
	struct ustack_out o;
	__u32 n = ustack__walk(ctx, e->pid, at, e->stack, MEMORY_MAX_USTACK, &o);

	if (o.fp)
		e->flags |= MEMORY_F_USTACK_FP;
	if (o.truncated)
		e->flags |= MEMORY_F_USTACK_TRUNCATED;
	*python = o.python;
	e->nr_ustack = n;
	return n;
}

/*
 * A sampled allocation: into the live table, and to user space with the stack walked from the
 * registers of ctx (the allocating call's return).
 */
static __always_inline void record_alloc(struct pt_regs *ctx, const struct walk_start *at,
					 __u32 pid, __u64 ptr, __u64 size, __u64 mean, __u64 unit,
					 __u32 flags)
{
	struct memory_key key = { .pid = pid, .ptr = ptr };
	struct memory_alloc_event *e;
	struct memory_live live;
	struct bpf_dynptr rec;
	__u64 *seq, ticket, len;
	__u32 zero = 0, n, pn = 0;
	bool python;

	e = bpf_map_lookup_elem(&memory_scratch, &zero);
	seq = bpf_map_lookup_elem(&memory_seq, &zero);
	if (!e || !seq)
		return;
	ticket = __sync_fetch_and_add(seq, 1) + 1;
	e->type = MEMORY_EV_ALLOC;
	e->pid = pid;
	e->ptr = ptr;
	e->size = size;
	e->time_ns = bpf_ktime_get_ns();
	e->mean = mean;
	e->unit = unit;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->flags = flags;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	live.size = size;
	if (flags & MEMORY_F_JAVA) {
		/* Named by its class, not its address: nothing to free. */
	} else if (bpf_map_update_elem(&memory_live, &key, &live, BPF_ANY)) {
		e->flags |= MEMORY_F_UNTRACKED;
		count(MEMORY_CNT_DROP_LIVE_FULL);
	}
	n = alloc_stack(ctx, at, e, &python);
	if (n > MEMORY_MAX_USTACK)
		n = MEMORY_MAX_USTACK;
	if (python && !(flags & (MEMORY_F_GO | MEMORY_F_JAVA)) && n <= MEMORY_MAX_USTACK)
		pn = ustack__interp(ctx, pid, &e->stack[n], MEMORY_MAX_PYTHON);
	e->nr_python = pn;
	len = __builtin_offsetof(struct memory_alloc_event, stack) + (n + 2 * pn) * sizeof(__u64);
	/* Kept for the verifier, which cannot know what bounds n and pn. */
	barrier_var(len);
	if (len > sizeof(*e))
		len = sizeof(*e);
	/* Copied into the ring before the ticket is checked: nothing can change it there. */
	if (bpf_ringbuf_reserve_dynptr(&memory_events, len, 0, &rec)) {
		bpf_ringbuf_discard_dynptr(&rec, BPF_RB_NO_WAKEUP);
		count(MEMORY_CNT_DROP_RINGBUF);
		goto out_forget;
	}
	if (bpf_dynptr_write(&rec, 0, e, len, 0)) {
		bpf_ringbuf_discard_dynptr(&rec, BPF_RB_NO_WAKEUP);
		count(MEMORY_CNT_DROP_RINGBUF);
		goto out_forget;
	}
	if (*(volatile __u64 *)seq != ticket) {
		bpf_ringbuf_discard_dynptr(&rec, BPF_RB_NO_WAKEUP);
		count(MEMORY_CNT_DROP_RACED);
		goto out_forget;
	}
	bpf_ringbuf_submit_dynptr(&rec, BPF_RB_NO_WAKEUP);
	return;
out_forget:
	/* User space never learns of it: keep the table to what it knows. */
	bpf_map_delete_elem(&memory_live, &key);
}

SEC("uretprobe.multi")
int memory_return(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct mem_thread *t;
	struct walk_start at;
	__u64 ptr = PT_REGS_RC(ctx), size;
	__u32 fn;

	t = bpf_task_storage_get(&memory_threads, bpf_get_current_task_btf(), 0, 0);
	/* Not the return of the call the entry recorded (a nested one's, or none). */
	if (!t || !t->call_sp || PT_REGS_SP(ctx) != t->call_sp + 8)
		return 0;
	t->call_sp = 0;
	fn = t->fn;
	size = t->size;
	switch (fn) {
	case MEMORY_FN_REALLOC:
	case MEMORY_FN_REALLOCARRAY:
		/* The old block is gone when a new one came back, or when size 0 freed it. */
		if (t->arg && (ptr || !size))
			forget(pid, t->arg);
		break;
	case MEMORY_FN_POSIX_MEMALIGN:
		if (ptr || bpf_probe_read_user(&ptr, sizeof(ptr), (void *)t->arg))
			return 0; /* an error number, or the result unreadable */
		break;
	case MEMORY_FN_MMAP:
		if (ptr == (__u64)-1) /* MAP_FAILED */
			return 0;
		break;
	}
	if (!t->sampled || !ptr)
		return 0;
	at = (struct walk_start){ PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx) };
	record_alloc(ctx, &at, pid, ptr, size, mean_interval, 0, 0);
	return 0;
}

/*
 * Preload mode: the shim (preload/autoprof_preload.c) samples in the process and writes its
 * samples and their frees into a ring autoprof reads; it calls this marker only when the ring
 * filled another quarter, to have it drained before it is full.
 */
SEC("uprobe.multi")
int memory_marker(struct pt_regs *ctx)
{
	struct memory_free_event ev = { .type = MEMORY_EV_FLUSH,
					.pid = bpf_get_current_pid_tgid() >> 32 };

	if (bpf_ringbuf_output(&memory_events, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP))
		count(MEMORY_CNT_DROP_RINGBUF);
	return 0;
}

/*
 * Go: the runtime samples by itself (one object per runtime.MemProfileRate bytes) and calls
 * mProf_Malloc for each sampled object; the sweeper frees a profiled object's record through
 * freeSpecial. Entry probes only: a uretprobe's hijacked return address breaks when Go moves the
 * goroutine's stack. The walk starts at the probe (frame pointers); user space strips the
 * runtime's leading frames and scales by the process's MemProfileRate.
 */
SEC("uprobe.multi")
int memory_go(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct walk_start at;
	__u64 ptr, size, ax = ctx->ax, bx = ctx->bx, cx = ctx->cx;

	/* Read before choosing (a select between ctx offsets does not verify). */
	barrier_var(ax);
	barrier_var(bx);
	barrier_var(cx);
	if ((cookie & 0xff) == MEMORY_FN_GO_FREE) {
		ptr = bx;
		if (ptr) {
			count(MEMORY_CNT_FREES);
			forget(pid, ptr);
		}
		return 0;
	}
	if ((cookie & 0xff) != MEMORY_FN_GO_MALLOC)
		return 0;
	if (cookie & MEMORY_COOKIE_GO_MP) {
		ptr = bx;
		size = cx;
	} else {
		ptr = ax;
		size = bx;
	}
	if (!ptr)
		return 0;
	count(MEMORY_CNT_SAMPLED);
	at = (struct walk_start){ PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx) };
	record_alloc(ctx, &at, pid, ptr, size, 0, 0, MEMORY_F_GO);
	return 0;
}

/*
 * Java (HotSpot): the JVM tells AllocTracer of every allocation that took a new TLAB (the
 * thread's next chunk of heap: its size is what the thread will allocate in it) and of every one
 * made outside TLABs, whether JFR listens or not. Each stands for its bytes (the TLAB's, or the
 * object's) and is sampled by them as a malloc of that size would be; the walk starts at the
 * probe, user space strips libjvm's frames and puts the class first. The Klass travels as ptr.
 */
SEC("uprobe.multi")
int memory_java(struct pt_regs *ctx)
{
	__u32 fn = bpf_get_attach_cookie(ctx) & 0xff;
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u64 klass = PT_REGS_PARM1(ctx), p3 = PT_REGS_PARM3(ctx), p4 = PT_REGS_PARM4(ctx);
	__u64 weight, unit;
	struct mem_thread *t;
	struct walk_start at;

	/* Read before choosing (a select between ctx offsets does not verify). */
	barrier_var(p3);
	barrier_var(p4);
	if (fn == MEMORY_FN_JAVA_TLAB) {
		weight = p3;
		unit = p4;
	} else if (fn == MEMORY_FN_JAVA_OUTSIDE) {
		weight = unit = p3;
	} else {
		return 0;
	}
	if (!klass || !weight)
		return 0;
	t = thread_state();
	if (!t || !draw(t, weight))
		return 0;
	at = (struct walk_start){ PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx) };
	record_alloc(ctx, &at, pid, klass, weight, mean_interval, unit, MEMORY_F_JAVA);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
