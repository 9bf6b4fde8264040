// SPDX-License-Identifier: GPL-2.0-only
/*
 * GPU memory: uprobes on the CUDA runtime's and driver's allocation, free and device calls
 * (src/gpu/cudafns.c names them), attached once per library file for every process that maps
 * it. GPU allocations are few and large, so each one that succeeds is sent with its stack; user
 * space keeps the live set. The runtime calls the driver underneath, so a probed call inside
 * another one on the same thread (its entry sp below the outer call's) is the outer call's own
 * doing and is not counted again.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "helpers.bpf.h"
#include "gpumem_abi.h"

const volatile bool unwind_tables = true;
/* Events wake user space once this much waits (a quarter of the ring); else the drain timer
 * (100 ms) reads them: a program allocating in a loop must not pay a wakeup per call. */
const volatile __u64 wakeup_bytes = 64 * 1024;
/* PyTorch's tensors: mean bytes between sampled ones (1: every one), and the multipliers of it
 * at GPUMEM_EXP_TABLE quantiles of an exponential (memsample__exp_table). */
const volatile __u64 torch_mean = 512 * 1024;
const volatile __u32 exp_table[GPUMEM_EXP_TABLE] = { 1 };

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18); /* resized before load */
} gpumem_events SEC(".maps");

#include "unwind.bpf.h"
#include "interp.bpf.h"
#include "ustack.bpf.h"

/* Contexts kept under the current one, as the driver keeps a thread's stack: a pop deeper
 * than this leaves the device unknown rather than guessed. */
#define GPU_CTX_STACK 8

/* One probed call in flight per thread, the thread's device, its tensor sampling. */
struct gpu_thread {
	__u64 call_sp; /* 0: no call in flight */
	__u64 arg[4];
	__u32 fn;      /* enum gpumem_fn */
	__u32 row;
	__u32 device;  /* ordinal + 1 of the thread's current device; 0: not known */
	__u32 sampling; /* until_sample drawn */
	__s64 until_sample; /* tensor bytes left before the next sampled one */
	__u64 ctx;     /* the current context; 0: none, or made current by the runtime */
	__u32 depth;   /* contexts pushed under the current one (may exceed GPU_CTX_STACK) */
	__u32 under_device[GPU_CTX_STACK];
	__u64 under_ctx[GPU_CTX_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gpu_thread);
} gpumem_threads SEC(".maps");

/* PyTorch tensors sampled and not freed: a free of one of them is sent, others cost a lookup.
 * Sized by gpu.max-live before load; user space drops a process's at its exit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct gpumem_torch_key);
	__type(value, __u8);
} gpumem_torch_live SEC(".maps");

/* The device of each context a process made (user space drops a process's at its exit). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct gpumem_ctx_key);
	__type(value, __u32);
} gpumem_ctxdev SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GPUMEM_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} gpumem_counters SEC(".maps");

/* The event is too big for the BPF stack; tickets guard it as in memory.bpf.c (uprobes run
 * preemptibly: another thread's allocation on this CPU may take it over mid-way). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gpumem_alloc_event);
} gpumem_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gpumem_seq SEC(".maps");

static __always_inline void count(__u32 idx)
{
	counters__add(&gpumem_counters, idx, 1);
}

static __always_inline __u64 wake(void)
{
	return ringbuf__filled(&gpumem_events, &wakeup_bytes) ? BPF_RB_FORCE_WAKEUP :
								BPF_RB_NO_WAKEUP;
}

/* A device ordinal as the thread's device (ordinal + 1), 0 for one that cannot be. */
static __always_inline __u32 device_of(__u64 ordinal)
{
	return (__s32)ordinal >= 0 && (__s32)ordinal < 0xffff ? (__u32)ordinal + 1 : 0;
}

SEC("uprobe.multi")
int gpumem_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), sp = PT_REGS_SP(ctx);
	struct gpu_thread *t;
	__u64 extent[3];
	__u32 loc[2];

	t = bpf_task_storage_get(&gpumem_threads, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;
	count(GPUMEM_CNT_CALLS);
	/* Inside another probed call (its entry sp is above ours): that call accounts for it. */
	if (t->call_sp && sp < t->call_sp) {
		count(GPUMEM_CNT_NESTED);
		return 0;
	}
	t->call_sp = sp;
	t->fn = cookie & 0xff;
	t->row = GPUMEM_COOKIE_ROW(cookie);
	t->arg[0] = PT_REGS_PARM1(ctx);
	t->arg[1] = PT_REGS_PARM2(ctx);
	t->arg[2] = PT_REGS_PARM3(ctx);
	t->arg[3] = PT_REGS_PARM4(ctx);
	switch (t->fn) {
	case GPUMEM_FN_ALLOC_3D:
		/* cudaExtent {width, height, depth} by value: on the stack above the return
		 * address. arg 1 and 2 become height and depth. */
		if (bpf_probe_read_user(extent, sizeof(extent), (void *)(sp + 8)))
			extent[1] = extent[2] = 0;
		t->arg[1] = extent[1];
		t->arg[2] = extent[2];
		break;
	case GPUMEM_FN_VMM_CREATE:
		/* The device the physical memory is on, when the properties name one. */
		if (!t->arg[2] || bpf_probe_read_user(loc, sizeof(loc),
						      (void *)(t->arg[2] + GPUMEM_PROP_LOCATION_TYPE)))
			loc[0] = 0;
		t->arg[2] = loc[0] == GPUMEM_LOCATION_DEVICE ? device_of(loc[1]) : 0;
		break;
	case GPUMEM_FN_CTX_CREATE_V3:
		t->arg[1] = PT_REGS_PARM5(ctx);
		break;
	case GPUMEM_FN_CTX_CREATE_V4:
		t->arg[1] = t->arg[3];
		break;
	case GPUMEM_FN_CTX_CREATE:
		t->arg[1] = t->arg[2];
		break;
	}
	return 0;
}

/* A successful allocation: to user space with the stack walked from ctx's registers (a call's
 * return, or a USDT probe's site). */
static __always_inline void record_alloc(struct pt_regs *ctx, __u32 pid, __u64 ptr, __u64 size,
					 __u32 row, __u32 device, __u64 mean)
{
	struct walk_start at = { PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx) };
	struct gpumem_alloc_event *e;
	struct ustack_out o;
	struct bpf_dynptr rec;
	__u64 *seq, ticket, len;
	__u32 zero = 0, n, pn = 0;

	e = bpf_map_lookup_elem(&gpumem_scratch, &zero);
	seq = bpf_map_lookup_elem(&gpumem_seq, &zero);
	if (!e || !seq)
		return;
	ticket = __sync_fetch_and_add(seq, 1) + 1;
	e->type = GPUMEM_EV_ALLOC;
	e->pid = pid;
	e->ptr = ptr;
	e->row = row;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->size = size;
	e->time_ns = bpf_ktime_get_ns();
	e->device = device;
	e->flags = 0;
	e->mean = mean;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	n = ustack__walk(ctx, pid, &at, e->stack, GPUMEM_MAX_USTACK, &o);
	if (o.truncated)
		e->flags |= GPUMEM_F_USTACK_TRUNCATED;
	if (o.python && n <= GPUMEM_MAX_USTACK)
		pn = ustack__interp(ctx, pid, &e->stack[n], GPUMEM_MAX_PYTHON);
	e->nr_ustack = n;
	e->nr_python = pn;
	len = __builtin_offsetof(struct gpumem_alloc_event, stack) + (n + 2 * pn) * sizeof(__u64);
	/* Kept for the verifier, which cannot know what bounds n and pn. */
	barrier_var(len);
	if (len > sizeof(*e))
		len = sizeof(*e);
	if (bpf_ringbuf_reserve_dynptr(&gpumem_events, len, 0, &rec)) {
		bpf_ringbuf_discard_dynptr(&rec, BPF_RB_NO_WAKEUP);
		count(GPUMEM_CNT_DROP_RINGBUF);
		return;
	}
	if (bpf_dynptr_write(&rec, 0, e, len, 0)) {
		bpf_ringbuf_discard_dynptr(&rec, BPF_RB_NO_WAKEUP);
		count(GPUMEM_CNT_DROP_RINGBUF);
		return;
	}
	if (*(volatile __u64 *)seq != ticket) {
		bpf_ringbuf_discard_dynptr(&rec, BPF_RB_NO_WAKEUP);
		count(GPUMEM_CNT_DROP_RACED);
		return;
	}
	bpf_ringbuf_submit_dynptr(&rec, wake());
	count(GPUMEM_CNT_ALLOCS);
}

static __always_inline void send_free(__u32 pid, __u64 ptr, __u32 row)
{
	struct gpumem_free_event ev = { .type = GPUMEM_EV_FREE, .pid = pid, .ptr = ptr,
					.row = row, .tid = (__u32)bpf_get_current_pid_tgid() };

	if (bpf_ringbuf_output(&gpumem_events, &ev, sizeof(ev), wake()))
		count(GPUMEM_CNT_DROP_RINGBUF);
	else
		count(GPUMEM_CNT_FREES);
}

/* A word the call wrote through one of its arguments; false when unreadable. */
static __always_inline bool read_out(__u64 *dst, __u64 addr)
{
	if (addr && !bpf_probe_read_user(dst, sizeof(*dst), (void *)addr))
		return true;
	count(GPUMEM_CNT_UNREADABLE);
	return false;
}

/* The context's device, made current on the thread (ctx 0: none is). */
static __always_inline void set_context(struct gpu_thread *t, __u32 pid, __u64 cx)
{
	struct gpumem_ctx_key key = { .pid = pid, .ctx = cx };
	__u32 *dev = cx ? bpf_map_lookup_elem(&gpumem_ctxdev, &key) : NULL;

	t->ctx = cx;
	t->device = dev ? *dev : 0;
}

/* The current context goes under the new one (cuCtxPushCurrent, cuCtxCreate). */
static __always_inline void push_context(struct gpu_thread *t)
{
	__u32 i = t->depth;

	if (i < GPU_CTX_STACK) {
		t->under_ctx[i & (GPU_CTX_STACK - 1)] = t->ctx;
		t->under_device[i & (GPU_CTX_STACK - 1)] = t->device;
	}
	t->depth = i + 1;
}

/* The context under the current one becomes current again; none under it leaves none. */
static __always_inline void pop_context(struct gpu_thread *t)
{
	__u32 i = t->depth;

	t->ctx = 0;
	t->device = 0;
	if (!i)
		return;
	t->depth = --i;
	if (i < GPU_CTX_STACK) {
		t->ctx = t->under_ctx[i & (GPU_CTX_STACK - 1)];
		t->device = t->under_device[i & (GPU_CTX_STACK - 1)];
	}
}

static __always_inline void keep_context(__u32 pid, __u64 cx, __u32 device)
{
	struct gpumem_ctx_key key = { .pid = pid, .ctx = cx };

	if (device && bpf_map_update_elem(&gpumem_ctxdev, &key, &device, BPF_ANY))
		count(GPUMEM_CNT_CTX_FULL);
}

SEC("uretprobe.multi")
int gpumem_return(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32, device, row;
	__u64 ptr = 0, size = 0, pitch = 0, word;
	struct gpu_thread *t;

	t = bpf_task_storage_get(&gpumem_threads, bpf_get_current_task_btf(), 0, 0);
	/* Not the return of the call the entry recorded (a nested one's, or none). */
	if (!t || !t->call_sp || PT_REGS_SP(ctx) != t->call_sp + 8)
		return 0;
	t->call_sp = 0;
	/* cudaError_t and CUresult are ints: 0 is success, anything else did nothing. */
	if ((__s32)PT_REGS_RC(ctx)) {
		count(GPUMEM_CNT_FAILED);
		return 0;
	}
	device = t->device;
	row = t->row;
	switch (t->fn) {
	case GPUMEM_FN_ALLOC:
		if (!read_out(&ptr, t->arg[0]))
			return 0;
		size = t->arg[1];
		break;
	case GPUMEM_FN_ALLOC_PITCH:
		if (!read_out(&ptr, t->arg[0]) || !read_out(&pitch, t->arg[1]))
			return 0;
		size = pitch * t->arg[3];
		break;
	case GPUMEM_FN_ALLOC_3D:
		/* cudaPitchedPtr {ptr, pitch, xsize, ysize} */
		if (!read_out(&ptr, t->arg[0]) || !read_out(&pitch, t->arg[0] + 8))
			return 0;
		size = pitch * t->arg[1] * t->arg[2];
		break;
	case GPUMEM_FN_VMM_CREATE:
		if (!read_out(&ptr, t->arg[0]))
			return 0;
		size = t->arg[1];
		if (t->arg[2])
			device = (__u32)t->arg[2];
		break;
	case GPUMEM_FN_FREE:
		if (t->arg[0])
			send_free(pid, t->arg[0], row);
		return 0;
	case GPUMEM_FN_SET_DEVICE:
		/* The device's primary context replaces the current one. */
		t->ctx = 0;
		t->device = device_of(t->arg[0]);
		return 0;
	case GPUMEM_FN_CTX_RETAIN:
		if (read_out(&word, t->arg[0]))
			keep_context(pid, word, device_of(t->arg[1]));
		return 0;
	case GPUMEM_FN_CTX_CREATE:
	case GPUMEM_FN_CTX_CREATE_V3:
	case GPUMEM_FN_CTX_CREATE_V4:
		/* A new context is pushed current on the thread that made it. */
		push_context(t);
		t->ctx = 0;
		t->device = device_of(t->arg[1]);
		if (read_out(&word, t->arg[0])) {
			t->ctx = word;
			keep_context(pid, word, t->device);
		}
		return 0;
	case GPUMEM_FN_CTX_SET:
		/* NULL pops the stack's top. */
		if (t->arg[0])
			set_context(t, pid, t->arg[0]);
		else
			pop_context(t);
		return 0;
	case GPUMEM_FN_CTX_PUSH:
		push_context(t);
		set_context(t, pid, t->arg[0]);
		return 0;
	case GPUMEM_FN_CTX_POP:
		pop_context(t);
		return 0;
	case GPUMEM_FN_CTX_DESTROY:
		/* Destroying the current context pops it; one deeper down stays stale there. */
		if (t->arg[0] && t->arg[0] == t->ctx)
			pop_context(t);
		return 0;
	case GPUMEM_FN_CTX_GET_DEVICE:
		if (read_out(&word, t->arg[0]))
			t->device = device_of((__u32)word);
		return 0;
	default:
		return 0;
	}
	if (ptr)
		record_alloc(ctx, pid, ptr, size, row, device, 0);
	return 0;
}

/*
 * PyTorch's caching allocator hands tensors out of segments it got from cudaMalloc or
 * cuMemCreate, without calling CUDA again; its USDT probes (pytorch:malloc and pytorch:free,
 * semaphore-guarded: the kernel turns them on while attached) say when. The stack is walked
 * from the probe's site, inside the allocator, for the sampled tensors only.
 */
static __always_inline __s64 next_interval(void)
{
	__u32 i = bpf_get_prandom_u32() & (GPUMEM_EXP_TABLE - 1);
	__u64 v = (torch_mean * exp_table[i]) >> GPUMEM_EXP_SHIFT;

	return v ? (__s64)v : 1;
}

SEC("usdt")
int gpumem_torch_malloc(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	long ptr = 0, device = -1, size = 0;
	struct gpumem_torch_key key;
	struct gpu_thread *t;
	__u8 one = 1;

	count(GPUMEM_CNT_TENSORS);
	if (bpf_usdt_arg(ctx, 0, &ptr) || bpf_usdt_arg(ctx, 1, &device) ||
	    bpf_usdt_arg(ctx, 2, &size)) {
		count(GPUMEM_CNT_UNREADABLE);
		return 0;
	}
	if (!ptr || size <= 0)
		return 0;
	/* Tensors are many (thousands a training step): sampled by bytes, per thread, as the
	 * heap profile samples malloc; torch_mean 1 records each one. */
	if (torch_mean > 1) {
		t = bpf_task_storage_get(&gpumem_threads, bpf_get_current_task_btf(), 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!t)
			return 0;
		if (!t->sampling) {
			t->sampling = 1;
			t->until_sample = next_interval();
		}
		t->until_sample -= size;
		if (t->until_sample > 0)
			return 0;
		t->until_sample = next_interval();
	}
	key = (struct gpumem_torch_key){ .pid = pid, .ptr = ptr };
	if (bpf_map_update_elem(&gpumem_torch_live, &key, &one, BPF_ANY))
		count(GPUMEM_CNT_TORCH_FULL);
	record_alloc(ctx, pid, ptr, size, (__u32)bpf_usdt_cookie(ctx), device_of((__s8)device),
		     torch_mean);
	return 0;
}

SEC("usdt")
int gpumem_torch_free(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct gpumem_torch_key key = { .pid = pid };
	long ptr = 0;

	if (bpf_usdt_arg(ctx, 0, &ptr) || !ptr)
		return 0;
	/* Only a sampled tensor's free: the others were never sent. */
	key.ptr = ptr;
	if (!bpf_map_delete_elem(&gpumem_torch_live, &key))
		send_free(pid, ptr, (__u32)bpf_usdt_cookie(ctx));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
