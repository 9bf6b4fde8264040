// SPDX-License-Identifier: GPL-2.0-only
/*
 * Off-CPU spans: where threads block, and for how long. A thread that leaves the CPU asleep
 * (TASK_INTERRUPTIBLE or TASK_UNINTERRUPTIBLE, not preempted while runnable) has its switch-out
 * time remembered; when it is switched back in, the span is filtered (minimum block time, one
 * hour at most, sampling) and only then are its stacks taken, so the filtered majority of
 * switches costs two slot reads and no clock read (see `struct offcpu_start`). See bpf/offcpu_abi.h
 * for why a span travels as two events.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "offcpu_abi.h"
#include "proc_abi.h"

#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define EBUSY 16

/* Wake user space only when this much is waiting; otherwise it drains on its own timer. */
const volatile __u64 wakeup_bytes = 256 * 1024;
/* Walk user stacks by unwind tables (false: frame pointers only, bpf_get_task_stack). */
const volatile bool unwind_tables = true;

/*
 * Run-time settings, in .data so that user space can change them while attached (the HTTP API).
 * sample_threshold: a span is kept when a random u32 is below it; 1 << 32 keeps every span.
 */
/* Switch-out times in `slots`, indexed by tid (pid_max fits), instead of task storage. */
const volatile bool slots_by_tid = false;
const volatile __u32 slot_mask = 0;
/* Time switches by the run queue's clock instead of bpf_ktime_get_ns() (stable TSC only). */
const volatile bool rq_clock = false;

volatile __u64 min_block_ns = 50000;
volatile __u64 sample_threshold = 1ULL << 32;
volatile __u32 epoch = 1;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized before load */
} events SEC(".maps");

#include "known_pids.bpf.h"
#include "interp.bpf.h"
#include "tracectx.bpf.h"
#include "unwind.bpf.h"

/*
 * Each thread's switch-out time, where a pointer chase finds it: the array slot of its tid
 * (sized to pid_max, so no two live threads share one: an inlined array access) or, where
 * pid_max is too big for that, its task storage (two storage lookups cost about 110 ns a
 * switch here, the array next to nothing). The time is the run queue's clock, which
 * __schedule() has just updated: bpf_ktime_get_ns() costs about 60 ns in this VM, a third of
 * the whole program, and only the kept spans need the monotonic clock (switch_in() converts).
 * epoch is the value of `epoch` when the time was taken: a thread blocked before the program was
 * last detached is not a span of this attachment.
 */
struct offcpu_start {
	__u64 time_ns; /* 0: not blocked (or already reported) */
	__u32 epoch;
	__u32 tid; /* whose time it is (slots) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* pid_max (a power of two) when slots_by_tid, set before load */
	__type(key, __u32);
	__type(value, struct offcpu_start);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_start);
} starts SEC(".maps");

static __always_inline struct offcpu_start *start_of(struct task_struct *task, __u32 tid,
						     bool create)
{
	__u32 key = tid & slot_mask;

	if (slots_by_tid)
		return bpf_map_lookup_elem(&slots, &key);
	return bpf_task_storage_get(&starts, task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/*
 * Now, by the clock switches are timed with: the run queue's, which __schedule() updated before
 * this tracepoint, read through a task of this CPU (its scheduling entity's run queue); with
 * stable TSC it is one clock across CPUs. (User space keeps rq_clock false where the kernel has
 * no cfs_rq->rq; the check keeps the program loadable there.) 0: unreadable.
 */
static __always_inline __u64 switch_clock(struct task_struct *prev)
{
	if (rq_clock && bpf_core_field_exists(struct cfs_rq, rq))
		return prev->se.cfs_rq->rq->clock;
	return bpf_ktime_get_ns();
}

/* tid -> the task work that sends its user stack; lives from switch-in to the return to user. */
struct offcpu_pending {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct offcpu_pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The span event is too big for the 512-byte BPF stack; sched_switch runs with preemption off. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_span);
} scratch SEC(".maps");

/*
 * Python walks begun on this CPU. A walk writes into the per-CPU python_frames (its loop's state
 * cannot live on the BPF stack), and the task work that walks can be preempted by another
 * thread's on the same CPU, whose walk then rewrites the buffer under the first. So a walk takes
 * a ticket (a fetch-and-add: no two walks hold the same one) before it starts, and its pairs are
 * kept only if the counter still holds that ticket once they are copied into the ring: no other
 * walk touched the buffer meanwhile. (The kernel runs the task work's callback between
 * migrate_disable() and migrate_enable(): preemptible, but on one CPU throughout.)
 * Not a per-task buffer: that would be 3 KiB of task storage for every thread of every Python
 * process, for as long as it lives; a race costs one span its Python frames, and is counted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} python_seq SEC(".maps");

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, bpf_task_work_callback_t callback,
					      void *aux__prog) __ksym;

static __always_inline void count(__u32 idx)
{
	counters__add(&counters, idx, 1);
}

static __always_inline __u64 wake_flags(__u32 pid)
{
	return known_pids__young(pid) || ringbuf__filled(&events, &wakeup_bytes) ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
}

/*
 * The user stack of `task`, which is current, from the user registers it entered the kernel
 * with, into u->ustack: by unwind tables (glibc's system-call wrappers have no frame pointers,
 * and their callers are what a wait is about), else by frame pointers. Returns frames.
 */
static __always_inline long offcpu__user_stack(struct task_struct *task, struct offcpu_user *u,
					      __u32 *proc_flags, bool *walked)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct unwind_outcome out = {};
	long n;

	*walked = false;
	if (unwind_tables && regs) {
		n = unwind__user_stack(u->pid, BPF_CORE_READ(regs, ip), BPF_CORE_READ(regs, sp),
				       BPF_CORE_READ(regs, bp), false, u->ustack, &out);
		if (n >= 0) {
			*walked = true;
			*proc_flags = out.proc_flags;
			if (out.truncated)
				u->flags |= OFFCPU_F_USTACK_TRUNCATED;
			if (out.truncated && n >= UNWIND_MAX_FRAMES)
				count(OFFCPU_CNT_USTACK_TRUNCATED);
			return n;
		}
		if (out.no_proc) {
			/* Not learned yet: the leaf alone, truncated (oncpu.bpf.c). */
			*proc_flags = UNWIND_PROC_INTERP;
			u->flags |= OFFCPU_F_USTACK_TRUNCATED;
			return 1;
		}
	}
	n = bpf_get_task_stack(task, u->ustack, OFFCPU_MAX_USTACK * sizeof(__u64),
			       BPF_F_USER_STACK);
	if (n < 0) {
		count(OFFCPU_CNT_USTACK_ERROR);
		u->flags |= OFFCPU_F_USTACK_ERROR;
		return 0;
	}
	n /= sizeof(__u64);
	if (n >= OFFCPU_MAX_USTACK) {
		n = OFFCPU_MAX_USTACK;
		u->flags |= OFFCPU_F_USTACK_TRUNCATED;
		count(OFFCPU_CNT_USTACK_TRUNCATED);
	}
	return n;
}

/*
 * u (reserved, filled) again with the current thread's Python frames after it, in a record of its
 * own (bpf/offcpu_abi.h: why), or NULL: no Python frames, or they could not be had whole. The caller
 * then sends u alone.
 */
static __always_inline struct offcpu_user_python *offcpu__with_python(struct task_struct *task,
								       struct offcpu_user *u)
{
	struct pt_regs *regs;
	__u64 *words, sp = 0;
	struct offcpu_user_python *up;
	struct python__out *pbuf;
	__u64 *seq, ticket, pn, psize;
	__u32 zero = 0;

	seq = bpf_map_lookup_elem(&python_seq, &zero);
	if (!seq)
		return NULL;
	ticket = __sync_fetch_and_add(seq, 1) + 1;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	words = interp__regs();
	if (regs && words)
		LUA_REGS_READ(regs, words, sp);
	pn = interp__walk(u->pid, sp);
	if (!pn)
		return NULL;
	pbuf = bpf_map_lookup_elem(&python_frames, &zero);
	if (!pbuf)
		return NULL;
	if (pn > OFFCPU_MAX_PYTHON)
		pn = OFFCPU_MAX_PYTHON;
	psize = pn * 2 * sizeof(__u64);
	barrier_var(psize);
	if (psize > OFFCPU_MAX_PYTHON * 2 * sizeof(__u64))
		return NULL;
	/* A full ring here loses no span: u goes without its Python frames. */
	up = bpf_ringbuf_reserve(&events, sizeof(*up), 0);
	if (!up)
		return NULL;
	if (bpf_probe_read_kernel(&up->user, sizeof(up->user), u) ||
	    bpf_probe_read_kernel(up->python, psize, pbuf->words)) {
		bpf_ringbuf_discard(up, BPF_RB_NO_WAKEUP);
		return NULL;
	}
	/* After the copy: a walk begun since may have rewritten what was copied. */
	if (*(volatile __u64 *)seq != ticket) {
		count(OFFCPU_CNT_PYTHON_RACED);
		bpf_ringbuf_discard(up, BPF_RB_NO_WAKEUP);
		return NULL;
	}
	up->user.nr_python = pn;
	return up;
}

/* Runs in the thread that blocked, on its way back to user space: its user stack is intact. */
static int offcpu__send_user(struct bpf_map *map, __u32 *key, struct offcpu_pending *val)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	struct offcpu_user_python *up = NULL;
	struct offcpu_user *u;
	__u32 proc_flags = 0;
	bool walked;
	long un;

	(void)map;
	(void)val;
	/* The task work can be scheduled again from here on: a later span gets a new one. */
	bpf_map_delete_elem(&pending, key);
	/* Not a per-CPU scratch: the task work may be preempted, and the next one use it. */
	u = bpf_ringbuf_reserve(&events, sizeof(*u), 0);
	if (!u) {
		count(OFFCPU_CNT_DROP_RINGBUF);
		return 0;
	}
	u->kind = OFFCPU_EV_USER;
	u->flags = 0;
	u->pid = id >> 32;
	u->tid = (__u32)id;
	u->time_ns = bpf_ktime_get_ns();
	u->nr_python = 0;
	u->pad2 = 0;
	if (tracectx__read(u->pid, u->trace_id, u->span_id))
		u->flags |= OFFCPU_F_TRACE_CTX;
	un = offcpu__user_stack(task, u, &proc_flags, &walked);
	u->nr_ustack = un > OFFCPU_MAX_USTACK ? OFFCPU_MAX_USTACK : un;
	/* Interpreted frames for a process known to be CPython or Lua (or one not yet learned: the lookup
	 * then says); other processes pay one flag test. */
	if (!walked || (proc_flags & UNWIND_PROC_INTERP))
		up = offcpu__with_python(task, u);
	if (up) {
		bpf_ringbuf_discard(u, BPF_RB_NO_WAKEUP);
		bpf_ringbuf_submit(up, wake_flags(up->user.pid));
	} else {
		bpf_ringbuf_submit(u, wake_flags(u->pid));
	}
	count(OFFCPU_CNT_USER);
	return 0;
}

static __always_inline void switch_out(struct task_struct *prev, bool preempt,
				       unsigned int prev_state, __u64 now)
{
	__u64 threshold = sample_threshold;
	__u32 tid = prev->pid;
	struct offcpu_start *st;

	/* Preempted while runnable is CPU contention, not a wait; kernel threads have no user
	 * frames to show, and the idle task never sleeps. */
	if (preempt || !(prev_state & (TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE)) || !tid ||
	    (prev->flags & PF_KTHREAD))
		return;
	if (threshold < (1ULL << 32) && bpf_get_prandom_u32() >= threshold) {
		count(OFFCPU_CNT_FILTER_SAMPLED);
		return;
	}
	st = start_of(prev, tid, true);
	if (!st) {
		count(OFFCPU_CNT_DROP_MAP_FULL);
		return;
	}
	st->time_ns = now;
	st->epoch = epoch;
	st->tid = tid;
}

static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	struct offcpu_pending none = {}, *p;
	__u32 tid = next->pid, zero = 0;
	struct offcpu_span *e;
	struct offcpu_start *st;
	__u64 start, size, mono;
	long kn, err;

	if (!tid)
		return;
	st = start_of(next, tid, false);
	if (!st || !st->time_ns || st->tid != tid)
		return;
	start = st->time_ns;
	st->time_ns = 0;
	if (st->epoch != epoch)
		return;
	if (now - start < min_block_ns) {
		count(OFFCPU_CNT_FILTER_SHORT);
		return;
	}
	if (now - start > OFFCPU_MAX_BLOCK_NS) {
		count(OFFCPU_CNT_FILTER_LONG);
		return;
	}
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	e->kind = OFFCPU_EV_SPAN;
	e->flags = 0;
	e->pid = next->tgid;
	e->tid = tid;
	/* User space places spans by the monotonic clock; the span's length is the switch clock's. */
	mono = rq_clock ? bpf_ktime_get_ns() : now;
	e->start_ns = mono - (now - start);
	e->end_ns = mono;
	e->cpu = bpf_get_smp_processor_id();
	e->pad = 0;
	__builtin_memcpy(e->comm, next->comm, sizeof(e->comm));
	/* `next` has not run yet: its saved kernel stack is the one it blocked on. */
	kn = bpf_get_task_stack(next, e->kstack, OFFCPU_MAX_KSTACK * sizeof(__u64), 0);
	if (kn < 0) {
		count(OFFCPU_CNT_KSTACK_ERROR);
		kn = 0;
	}
	kn /= sizeof(__u64);
	if (kn > OFFCPU_MAX_KSTACK)
		kn = OFFCPU_MAX_KSTACK;
	e->nr_kstack = kn;
	size = __builtin_offsetof(struct offcpu_span, kstack) + kn * sizeof(__u64);
	if (size > sizeof(*e))
		size = sizeof(*e);
	if (bpf_ringbuf_output(&events, e, size, BPF_RB_NO_WAKEUP)) {
		count(OFFCPU_CNT_DROP_RINGBUF);
		return;
	}
	count(OFFCPU_CNT_SPANS);

	/* One task work per thread at a time: -EBUSY means it is already on its way. */
	bpf_map_update_elem(&pending, &tid, &none, BPF_NOEXIST);
	p = bpf_map_lookup_elem(&pending, &tid);
	if (!p) {
		count(OFFCPU_CNT_DROP_TASK_WORK);
		return;
	}
	err = bpf_task_work_schedule_resume_impl(next, &p->tw, &pending,
						 (bpf_task_work_callback_t)offcpu__send_user, NULL);
	if (err && err != -EBUSY) {
		bpf_map_delete_elem(&pending, &tid);
		count(OFFCPU_CNT_DROP_TASK_WORK);
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = switch_clock(prev);

	if (!now)
		return 0;
	switch_out(prev, preempt, prev_state, now);
	switch_in(next, now);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
