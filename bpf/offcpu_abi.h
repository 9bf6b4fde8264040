/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_OFFCPU_ABI_H
#define AUTOPROF_BPF_OFFCPU_ABI_H

/* Shared between bpf/offcpu.bpf.c and src/sample/offcpu.c: __u32/__u64 only, no libc. */

#define OFFCPU_MAX_KSTACK 127
#define OFFCPU_MAX_USTACK 127
#define OFFCPU_COMM_LEN 16
/* Python frames: pairs of words (bpf/python_abi.h), as many as an on-CPU sample carries. */
#define OFFCPU_MAX_PYTHON 96

/* Longest span recorded: longer ones are a thread parked for good, not a wait worth showing. */
#define OFFCPU_MAX_BLOCK_NS (3600ULL * 1000000000ULL)

/*
 * A blocked span reaches user space in two events, because no single hook sees both of its
 * stacks. At sched_switch the thread being switched in still sits on its blocked kernel stack,
 * but `current` is the previous task: the kernel walks no other task's user stack
 * (bpf_get_task_stack(next, BPF_F_USER_STACK) returns 0 frames) and its memory is not the one
 * mapped. So the switch-in sends the span and its kernel stack, and schedules a BPF task work
 * that runs in the thread itself on its way back to user space, where its user registers and
 * stack are still those of the moment it blocked; that sends the user stack. User space joins
 * them by tid: a user event completes every span of its thread received before it (a thread
 * can block several times in one system call).
 */
enum offcpu_event_kind {
	OFFCPU_EV_SPAN = 1,
	OFFCPU_EV_USER = 2,
};

enum offcpu_flags {
	OFFCPU_F_UNINTERRUPTIBLE = 1 << 0, /* span: blocked in TASK_UNINTERRUPTIBLE (D) */
	OFFCPU_F_USTACK_TRUNCATED = 1 << 1, /* user: the stack ended before its outermost frame */
	OFFCPU_F_USTACK_ERROR = 1 << 2,	   /* user: the user stack could not be read */
	OFFCPU_F_TRACE_CTX = 1 << 3,	   /* user: trace_id/span_id hold the thread's span */
};

/* Sent at switch-in with only nr_kstack entries of kstack[] (leaf first). */
struct offcpu_span {
	__u32 kind; /* OFFCPU_EV_SPAN */
	__u32 flags;
	__u32 pid; /* thread group id */
	__u32 tid;
	__u64 start_ns; /* bpf_ktime_get_ns() at switch-out */
	__u64 end_ns;	/* at switch-in: offcpu_ns = end_ns - start_ns */
	__u32 cpu;
	__u16 nr_kstack;
	__u16 pad;
	char comm[OFFCPU_COMM_LEN];
	__u64 kstack[OFFCPU_MAX_KSTACK];
};

/* Sent by the thread on its way back to user space, with nr_ustack entries of ustack[]. */
struct offcpu_user {
	__u32 kind; /* OFFCPU_EV_USER */
	__u32 flags;
	__u32 pid;
	__u32 tid;
	__u64 time_ns;
	__u16 nr_ustack;
	__u16 nr_python; /* pairs in the struct offcpu_user_python this begins (0: none) */
	__u32 pad2;
	__u8 trace_id[16]; /* with OFFCPU_F_TRACE_CTX: OTEP 4947 thread context */
	__u8 span_id[8];
	__u64 ustack[OFFCPU_MAX_USTACK];
};

/*
 * The user event of a CPython thread: the same event with its Python frames after it, nr_python
 * (code object, instruction) pairs, leaf first. A second, bigger kind of record rather than a
 * bigger struct offcpu_user: off-CPU records are frequent and most threads run no Python, so
 * they keep their size and only Python threads pay for the pairs.
 */
struct offcpu_user_python {
	struct offcpu_user user;
	__u64 python[2 * OFFCPU_MAX_PYTHON];
};

/* Per-CPU counters, index into the `counters` array. */
enum offcpu_counter {
	OFFCPU_CNT_SPANS = 0,	    /* spans sent (kernel part) */
	OFFCPU_CNT_USER,	    /* user stacks sent */
	OFFCPU_CNT_FILTER_SHORT,    /* shorter than min_block_ns */
	OFFCPU_CNT_FILTER_LONG,	    /* longer than OFFCPU_MAX_BLOCK_NS */
	OFFCPU_CNT_FILTER_SAMPLED,  /* not picked by the sampling probability */
	OFFCPU_CNT_DROP_MAP_FULL,   /* no task storage to remember a switch-out in (out of memory) */
	OFFCPU_CNT_DROP_RINGBUF,    /* ring buffer full: span or user stack lost */
	OFFCPU_CNT_DROP_TASK_WORK,  /* the user-stack task work could not be set up */
	OFFCPU_CNT_KSTACK_ERROR,    /* kernel stack could not be read (span still sent) */
	OFFCPU_CNT_USTACK_ERROR,    /* user stack could not be read */
	OFFCPU_CNT_USTACK_TRUNCATED, /* user stack deeper than OFFCPU_MAX_USTACK */
	OFFCPU_CNT_PYTHON_RACED,    /* Python frames dropped: another walk took the buffer */
	OFFCPU_CNT__MAX,
};

#endif
