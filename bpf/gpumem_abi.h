/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_GPUMEM_ABI_H
#define AUTOPROF_BPF_GPUMEM_ABI_H

/* Shared between bpf/gpumem.bpf.c and src/gpu/gpumem.c: __u32/__u64 only, no libc. */

#define GPUMEM_MAX_USTACK 127
#define GPUMEM_MAX_PYTHON 96
#define GPUMEM_COMM_LEN 16
/* PyTorch's tensors are sampled by bytes (gpu.pytorch-sample-interval): the table of sampling
 * intervals, as memory's (bpf/memory_abi.h). */
#define GPUMEM_EXP_TABLE 1024
#define GPUMEM_EXP_SHIFT 16

/*
 * What a probed CUDA function does, the low byte of its uprobe's BPF cookie (src/gpu/cudafns.c
 * has the table of names). The argument that each reads is said beside it; "out" arguments are
 * read at return, when the call succeeded (it returned 0).
 */
enum gpumem_fn {
	GPUMEM_FN_NONE = 0,
	/* Allocations: size in an argument, the pointer written through arg 1. */
	GPUMEM_FN_ALLOC,	/* (void **out, size_t size, ...) */
	GPUMEM_FN_ALLOC_PITCH,	/* (void **out, size_t *pitch, size_t width, size_t height) */
	GPUMEM_FN_ALLOC_3D,	/* (cudaPitchedPtr *out, cudaExtent e on the stack) */
	GPUMEM_FN_VMM_CREATE,	/* cuMemCreate(handle *out, size, prop *, flags) */
	/* Frees: the pointer (or cuMemRelease's handle) in arg 1, gone when the call returns 0;
	 * the row says which kind of memory. */
	GPUMEM_FN_FREE,		/* (void *p, ...) */
	/* The calling thread's device. */
	GPUMEM_FN_SET_DEVICE,	/* cudaSetDevice(int dev) */
	GPUMEM_FN_CTX_RETAIN,	/* cuDevicePrimaryCtxRetain(CUcontext *out, int dev) */
	GPUMEM_FN_CTX_CREATE,	/* cuCtxCreate_v2(CUcontext *out, unsigned flags, int dev) */
	GPUMEM_FN_CTX_CREATE_V3, /* cuCtxCreate_v3(CUcontext *out, params *, int n, unsigned, int dev) */
	GPUMEM_FN_CTX_CREATE_V4, /* cuCtxCreate_v4(CUcontext *out, params *, unsigned, int dev) */
	GPUMEM_FN_CTX_SET,	/* cuCtxSetCurrent(ctx): replaces the top of the thread's stack */
	GPUMEM_FN_CTX_PUSH,	/* cuCtxPushCurrent_v2(ctx) */
	GPUMEM_FN_CTX_POP,	/* cuCtxPopCurrent_v2(CUcontext *out) */
	GPUMEM_FN_CTX_DESTROY,	/* cuCtxDestroy_v2(ctx): popped when it is the current one */
	GPUMEM_FN_CTX_GET_DEVICE, /* cuCtxGetDevice(int *out) */
	/* PyTorch's caching allocator: its USDT probes (provider pytorch) */
	GPUMEM_FN_TORCH_MALLOC, /* pytorch:malloc(ptr, device, size, stream): a tensor's memory */
	GPUMEM_FN_TORCH_FREE,	/* pytorch:free(ptr) */
	GPUMEM_FN__MAX,
};

/* The cookie's second byte: which row of the function table (src/gpu/cudafns.c) it is, so that
 * user space names the API of each allocation. */
#define GPUMEM_COOKIE_ROW(c) (((c) >> 8) & 0xff)

/* cuMemCreate's CUmemAllocationProp: location.type at 8, location.id at 12. */
#define GPUMEM_PROP_LOCATION_TYPE 8
#define GPUMEM_PROP_LOCATION_ID 12
#define GPUMEM_LOCATION_DEVICE 1

/* Key of gpumem_ctxdev: a context a process made (its value: the device ordinal + 1). */
struct gpumem_ctx_key {
	__u32 pid;
	__u32 pad;
	__u64 ctx;
};

/* Key of gpumem_torch_live: a sampled PyTorch tensor not freed yet. */
struct gpumem_torch_key {
	__u32 pid;
	__u32 pad;
	__u64 ptr;
};

enum gpumem_event_type {
	GPUMEM_EV_ALLOC = 1, /* an allocation that succeeded, with its stack */
	GPUMEM_EV_FREE = 2,  /* a free (or release) that succeeded */
};

/* A free: also the head of an allocation. */
struct gpumem_free_event {
	__u32 type;
	__u32 pid;
	__u64 ptr; /* the pointer, or cuMemCreate's handle */
	__u32 row; /* the function table's row (its API and address space) */
	__u32 tid;
};

/* Sent with only nr_ustack entries of stack[], leaf first (stack[0] is the return address of
 * the call), then nr_python (code object, instruction) pairs (bpf/python_abi.h). */
struct gpumem_alloc_event {
	__u32 type; /* GPUMEM_EV_ALLOC */
	__u32 pid;
	__u64 ptr;
	__u32 row;
	__u32 tid;
	__u64 size;
	__u64 time_ns;
	__u32 device; /* the ordinal + 1; 0: not known */
	__u32 flags;
	__u64 mean; /* the sampling interval it was drawn with; 0 or 1: not sampled (every one) */
	__u32 nr_ustack;
	__u32 nr_python;
	char comm[GPUMEM_COMM_LEN];
	__u64 stack[GPUMEM_MAX_USTACK + 2 * GPUMEM_MAX_PYTHON];
};

enum gpumem_event_flags {
	GPUMEM_F_USTACK_TRUNCATED = 1 << 0, /* the walk stopped before the outermost frame */
};

/* Per-CPU counters, index into `gpumem_counters`. */
enum gpumem_counter {
	GPUMEM_CNT_CALLS = 0,	  /* probed calls entered */
	GPUMEM_CNT_NESTED,	  /* inside another probed call (the runtime calling the driver) */
	GPUMEM_CNT_FAILED,	  /* returned an error: nothing recorded */
	GPUMEM_CNT_UNREADABLE,	  /* succeeded, but what it wrote could not be read */
	GPUMEM_CNT_ALLOCS,	  /* allocations sent */
	GPUMEM_CNT_FREES,	  /* frees sent */
	GPUMEM_CNT_DROP_RINGBUF,  /* an event lost to a full ring buffer */
	GPUMEM_CNT_DROP_RACED,	  /* an allocation whose scratch another thread's took over */
	GPUMEM_CNT_CTX_FULL,	  /* a context's device not kept: the table was full */
	GPUMEM_CNT_TENSORS,	  /* PyTorch tensors made (of which sampled: allocs) */
	GPUMEM_CNT_TORCH_FULL,	  /* a sampled tensor not kept for its free: the table was full */
	GPUMEM_CNT__MAX,
};

#endif
