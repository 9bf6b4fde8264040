/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_MEMORY_ABI_H
#define AUTOPROF_BPF_MEMORY_ABI_H

/* Shared between bpf/memory.bpf.c and src/memory/memory.c: __u32/__u64 only, no libc. */

#define MEMORY_MAX_USTACK 127
/* Python frames after the native ones (a CPython process's sampled allocation). */
#define MEMORY_MAX_PYTHON 96
#define MEMORY_COMM_LEN 16
/* Entries of the table of sampling intervals (a quantized exponential distribution). */
#define MEMORY_EXP_TABLE 1024
/* Fixed-point scale of that table's multipliers of the mean interval. */
#define MEMORY_EXP_SHIFT 16

/*
 * What a probed function is, the low byte of its uprobe's BPF cookie. The entry probe of every
 * kind and the return probe of the allocating kinds share one program each.
 */
enum memory_fn {
	MEMORY_FN_MALLOC = 1,	     /* malloc(size) */
	MEMORY_FN_CALLOC,	     /* calloc(n, size) */
	MEMORY_FN_REALLOC,	     /* realloc(ptr, size) */
	MEMORY_FN_REALLOCARRAY,	     /* reallocarray(ptr, n, size) */
	MEMORY_FN_FREE,		     /* free(ptr) */
	MEMORY_FN_POSIX_MEMALIGN,    /* posix_memalign(&ptr, align, size) -> 0 */
	MEMORY_FN_ALIGNED_ALLOC,     /* aligned_alloc(align, size), memalign(align, size) */
	MEMORY_FN_VALLOC,	     /* valloc(size), pvalloc(size) */
	MEMORY_FN_MMAP,		     /* mmap(addr, len, prot, flags, fd, off): anonymous, big */
	MEMORY_FN_MUNMAP,	     /* munmap(addr, len) */
	/* Preload mode: the shim's marker, called when its ring fills another quarter. */
	MEMORY_FN_PRELOAD_FLUSH,     /* autoprof_preload_flush() */
	/* Go: the runtime's own sampled path (register ABI: arguments in RAX, RBX, RCX...). */
	MEMORY_FN_GO_MALLOC,	     /* runtime.mProf_Malloc([mp,] p, size): a sampled object */
	MEMORY_FN_GO_FREE,	     /* runtime.freeSpecial(s, p, size): a profiled object swept */
	/* HotSpot: what it tells AllocTracer (for JFR, which need not listen). */
	MEMORY_FN_JAVA_TLAB,	     /* send_allocation_in_new_tlab(klass, obj, tlab, size, thr) */
	MEMORY_FN_JAVA_OUTSIDE,	     /* send_allocation_outside_tlab(klass, obj, size, thr) */
	MEMORY_FN__MAX,
};

/* Anonymous mappings from this size up are allocations (smaller ones are left alone). */
#define MEMORY_MMAP_MIN (64 * 1024)
#define MEMORY_MAP_ANONYMOUS 0x20

/* Cookie bit: runtime.mProf_Malloc takes mp first (Go 1.23 and later). */
#define MEMORY_COOKIE_GO_MP (1 << 8)

/* A live sampled allocation: key of the live table, also what a free event carries. */
struct memory_key {
	__u32 pid;
	__u32 pad;
	__u64 ptr;
};

struct memory_live {
	__u64 size;
};

enum memory_event_type {
	MEMORY_EV_ALLOC = 1, /* a sampled allocation, with its stack */
	MEMORY_EV_FREE = 2,  /* a sampled allocation was freed (or moved by realloc) */
	MEMORY_EV_FLUSH = 3, /* a preload shim's ring needs draining (pid; ptr unused) */
};

enum memory_event_flags {
	MEMORY_F_UNTRACKED = 1 << 0,	   /* the live table was full: counted in allocs only */
	MEMORY_F_USTACK_TRUNCATED = 1 << 1, /* the walk stopped before the outermost frame */
	MEMORY_F_USTACK_FP = 1 << 2,	   /* walked by frame pointers (no table yet) */
	MEMORY_F_PRELOAD = 1 << 3,	   /* from the preload shim's ring (walked in user space) */
	MEMORY_F_GO = 1 << 4,		   /* Go's runtime: its frames lead, mean is its rate */
	MEMORY_F_JAVA = 1 << 5,		   /* HotSpot: ptr is the Klass, size the bytes it
					    * stands for, unit the object's; not in the live
					    * table (the collector moves objects) */
};

struct memory_free_event {
	__u32 type; /* MEMORY_EV_FREE */
	__u32 pid;
	__u64 ptr;
};

/* Sent with only nr_ustack entries of stack[], leaf first: stack[0] is the caller's return
 * address (the allocating call site); then nr_python (code object, instruction) pairs of the
 * thread's Python frames, leaf first (bpf/python_abi.h). mean: the sampling interval it was drawn
 * with. Preload records become these in user space. */
struct memory_alloc_event {
	__u32 type; /* MEMORY_EV_ALLOC */
	__u32 pid;
	__u64 ptr;
	__u64 size;
	__u64 time_ns;
	__u64 mean;
	__u64 unit; /* MEMORY_F_JAVA: the size of the object allocated */
	__u32 tid;
	__u32 flags;
	__u32 nr_ustack;
	__u32 nr_python;
	char comm[MEMORY_COMM_LEN];
	__u64 stack[MEMORY_MAX_USTACK + 2 * MEMORY_MAX_PYTHON];
};

/* Per-CPU counters, index into `memory_counters`. */
enum memory_counter {
	MEMORY_CNT_CALLS = 0,	   /* allocating calls seen */
	MEMORY_CNT_SAMPLED,	   /* of which sampled */
	MEMORY_CNT_NESTED,	   /* calls inside another probed call (realloc(NULL) -> malloc) */
	MEMORY_CNT_FREES,	   /* non-NULL frees seen */
	MEMORY_CNT_FREES_SAMPLED,  /* of which of a live sampled allocation */
	MEMORY_CNT_DROP_LIVE_FULL, /* sampled, but the live table was full */
	MEMORY_CNT_DROP_RINGBUF,   /* an event lost to a full ring buffer */
	MEMORY_CNT_DROP_RACED,	   /* a sample whose scratch another thread's took over */
	MEMORY_CNT__MAX,
};

#endif
