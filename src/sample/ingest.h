/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_SAMPLE_INGEST_H
#define AUTOPROF_SAMPLE_INGEST_H

/*
 * The one path from a raw stack, as a BPF program sent it, to the frames a sample is stored
 * with; every sampler (on-CPU, off-CPU, memory) takes it:
 *
 *   1. the process, learned now if new (proc/proctab.c), and its CPython runtime located
 *      (runtime/python.c) so that its Python frames can be named;
 *   2. kernel addresses as frames of the kernel; user addresses stepped back from return
 *      addresses into their calls;
 *   3. user addresses resolved to (file, offset) by the process's mappings, Python frames
 *      spliced in place of the evaluation loops that ran them;
 *   4. a "[truncated]" frame where the walk stopped short of the stack's root, so that a cut
 *      stack never passes for a complete one; "[exec]" or "[exiting]" in place of a user stack
 *      that no longer exists (symbolizer.h, enum sym_marker).
 *
 * What stays each sampler's own: decoding its event, what a sample is worth, where it goes.
 */
#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "symbolize/frame.h"

struct collect_ctx;
struct proc;
struct sample;

/* The most any sampler's BPF program sends (the bpf/ ABI headers); each asserts its own fit. */
#define INGEST_MAX_KSTACK 127
#define INGEST_MAX_USTACK 127
#define INGEST_MAX_PYTHON 96
/* With the leaf a sampler puts first, and the marker of a truncated walk. */
#define INGEST_MAX_FRAMES (1 + INGEST_MAX_KSTACK + INGEST_MAX_USTACK + INGEST_MAX_PYTHON + 1)

/* One stack as BPF sent it. Every stack is leaf first. */
struct ingest_raw {
	uint32_t pid;
	uint64_t time_ns;	 /* when it was taken (CLOCK_MONOTONIC); 0: not known */
	bool kthread;		 /* a kernel thread: no user stack, no process image */
	const __u64 *kstack;		 /* kernel addresses */
	uint32_t nr_kstack;
	bool kleaf_exact;	 /* kstack[0] is where the CPU was, not a return address */
	const __u64 *ustack;		 /* user addresses */
	uint32_t nr_ustack;
	bool uleaf_exact;	 /* ustack[0] is where the thread was, not a return address */
	bool utruncated;	 /* BPF's walk of the user stack stopped short of its root */
	uint8_t uend;		 /* enum sym_marker: why a user thread has no user stack at all
				  * (SYM_MARKER_EXEC, SYM_MARKER_EXITED), or SYM_MARKER_NONE */
	const __u64 *python;		 /* (code, instruction) pairs (bpf/python_abi.h), or NULL */
	uint32_t nr_python;
	const struct frame *leaf; /* a frame before all others (a Java allocation's class), or
				   * NULL; the caller holds its dso */
};

/* A resolved stack: kernel frames then user frames, leaf first. */
struct ingest_stack {
	struct proc *proc;	    /* borrowed (proctab__get's); NULL: not known (out of memory) */
	const struct frame *frames; /* owned by the ingest, valid until its next resolve */
	uint32_t nr_frames;
};

struct ingest;

/* One per sampler: it owns the frame buffers its resolves fill. NULL when out of memory. */
struct ingest *ingest__new(struct collect_ctx *ctx);
void ingest__free(struct ingest *ing); /* accepts NULL */

/*
 * Resolves raw (see above) at now_ns (CLOCK_MONOTONIC). Returns 0, or -E2BIG for a raw stack
 * deeper than INGEST_MAX_* (a malformed event: nothing resolved).
 */
int ingest__resolve(struct ingest *ing, const struct ingest_raw *raw, uint64_t now_ns,
		    struct ingest_stack *out);

/*
 * Listens to processes' lives (proc/proctab.h) for what the samplers' BPF shares: each time a
 * process's maps were read it tells the samplers (ctx->tracectx_fd) where its threads publish
 * their trace context, then hands the maps to the unwinder, if any (n == 0: the process is
 * gone); a process exec'd while we run has its tables built first.
 */
int ingest__observe(struct collect_ctx *ctx);

/* Fills the process fields of s (exe, exe_path, container_id, service); "" without p. */
void ingest__describe(struct sample *s, struct proc *p);

#endif
