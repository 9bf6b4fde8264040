/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_ONCPU_ABI_H
#define AUTOPROF_BPF_ONCPU_ABI_H

/* Shared between bpf/oncpu.bpf.c and src/sample/oncpu.c: __u32/__u64 only, no libc. */

/* bpf_get_stack() walks at most kernel.perf_event_max_stack (127) frames per stack. */
#define ONCPU_MAX_KSTACK 127
#define ONCPU_MAX_USTACK 127
#define ONCPU_COMM_LEN 16
/* Probed calls a sample can be inside (PROBES_MAX_NEST, bpf/probes_abi.h). */
#define ONCPU_MAX_CALLS 4
/* Python frames: pairs of words after the native frames (bpf/python_abi.h). */
#define ONCPU_MAX_PYTHON 96

enum oncpu_flags {
	ONCPU_F_KTHREAD = 1 << 0,	  /* kernel thread: no user stack by design */
	ONCPU_F_USTACK_TRUNCATED = 1 << 1, /* the user stack ended before its outermost frame */
	ONCPU_F_USTACK_ERROR = 1 << 2,	  /* bpf_get_stack() failed for the user stack */
	ONCPU_F_TRACE_CTX = 1 << 3,	  /* trace_id/span_id hold the thread's active span */
	ONCPU_F_USTACK_FP = 1 << 4,	  /* user stack walked by frame pointers alone */
	ONCPU_F_UNWIND_MISS = 1 << 5,	  /* a user pc outside the process's known mappings */
	/* In the kernel from an exception (a uprobe's int3, a page fault), not a system call:
	 * the user pc is the instruction itself, not the one after a syscall, so it is not
	 * stepped back. */
	ONCPU_F_USER_PC_EXACT = 1 << 6,
	/* No user stack, and none cut short: the registers are those of an image an exec has
	 * replaced since (sampled in execve past its point of no return), or the process has
	 * let its memory go (sampled in exit). nr_ustack is 0. */
	ONCPU_F_USER_EXEC = 1 << 7,
	ONCPU_F_USER_EXITED = 1 << 8,
};

/*
 * One sample, sent through the ring buffer with only nr_kstack + nr_ustack + 2 * nr_python
 * entries of stack[] (kernel frames first, then user frames, each leaf first, then the Python
 * frames of a CPython thread, leaf first).
 */
struct oncpu_event {
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;     /* thread group id */
	__u32 tid;
	__u32 cpu;
	__u32 flags;
	__u16 nr_kstack;
	__u16 nr_ustack;
	__u16 nr_python; /* pairs (code object, instruction) after the user frames */
	__u16 pad;
	char comm[ONCPU_COMM_LEN];
	__u8 trace_id[16]; /* with ONCPU_F_TRACE_CTX: OTEP 4947 thread context */
	__u8 span_id[8];
	/* The probed calls (bpf/probes_abi.h) the thread is inside, outermost first. */
	__u32 nr_calls;
	__u32 call_probe[ONCPU_MAX_CALLS];
	__u32 pad2;
	__u64 call_start[ONCPU_MAX_CALLS];
	/* (+1: the sampler bounds where the Python frames start by a mask, 255) */
	__u64 stack[ONCPU_MAX_KSTACK + ONCPU_MAX_USTACK + 1 + 2 * ONCPU_MAX_PYTHON];
};

/* Per-CPU counters, index into the `counters` array. */
enum oncpu_counter {
	ONCPU_CNT_SAMPLES = 0,	   /* samples sent to user space */
	ONCPU_CNT_IDLE,		   /* samples of the idle task, not recorded */
	ONCPU_CNT_DROP_RINGBUF,	   /* ring buffer full: sample lost */
	ONCPU_CNT_KSTACK_ERROR,	   /* kernel stack could not be read (sample still sent) */
	ONCPU_CNT_USTACK_ERROR,	   /* user stack could not be read (sample still sent) */
	ONCPU_CNT_USTACK_TRUNCATED, /* user stack deeper than ONCPU_MAX_USTACK */
	ONCPU_CNT__MAX,
};

#endif
