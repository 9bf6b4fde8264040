// SPDX-License-Identifier: GPL-2.0-only
/*
 * On-CPU sampling: a perf_event program on the cpu-clock software event of every CPU.
 * Each sample carries its whole stack to user space through a ring buffer, where stacks are
 * deduplicated without loss; a full ring buffer is the only way to lose a sample and is counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "oncpu_abi.h"
#include "proc_abi.h"

/* Wake user space only when this much is waiting; otherwise it drains on its own timer. */
const volatile __u64 wakeup_bytes = 256 * 1024;
/* Walk user stacks by unwind tables (false: frame pointers only, bpf_get_stack). */
const volatile bool unwind_tables = true;

#define RING_CHECK_EVERY 8

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized before load */
} events SEC(".maps");

#include "known_pids.bpf.h"
#include "probes.bpf.h"
#include "interp.bpf.h"
#include "tracectx.bpf.h"
#include "unwind.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ONCPU_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The event is too big for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct oncpu_event);
} scratch SEC(".maps");

static __always_inline void count(__u32 idx)
{
	counters__add(&counters, idx, 1);
}

/*
 * The user registers to unwind from: the sample's own when it struck user code, else those the
 * task entered the kernel with.
 */
static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
	/* The context allows only whole-word loads: no narrowing to the low byte. */
	__u64 cs = *(volatile __u64 *)&ctx->regs.cs;

	return (cs & 3) == 3;
}

static __always_inline bool user_regs(struct bpf_perf_event_data *ctx, struct task_struct *task,
				      __u64 *ip, __u64 *sp, __u64 *bp)
{
	struct pt_regs *regs;

	if (in_user_mode(ctx)) {
		*ip = ctx->regs.ip;
		*sp = ctx->regs.sp;
		*bp = ctx->regs.bp;
		return true;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return false;
	*ip = BPF_CORE_READ(regs, ip);
	*sp = BPF_CORE_READ(regs, sp);
	*bp = BPF_CORE_READ(regs, bp);
	return *ip != 0;
}

/* The user registers Lua's walk looks in for its state (bpf/lua.bpf.h), where it looks: the
 * stack pointer, 0 without them. */
static __always_inline __u64 lua_regs(struct bpf_perf_event_data *ctx, struct task_struct *task)
{
	__u64 *words = interp__regs(), sp = 0;
	struct pt_regs *regs;

	if (!words)
		return 0;
	if (in_user_mode(ctx)) {
		LUA_REGS_FROM(&ctx->regs, words, sp);
		return sp;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (regs)
		LUA_REGS_READ(regs, words, sp);
	return sp;
}

/*
 * Whether the task entered the kernel by a system call: its user pc follows a `syscall`
 * instruction (0f 05). Otherwise (an exception: a uprobe's breakpoint, a page fault) the pc is
 * that of the instruction itself, often a function's first one, and stepping it back a byte
 * would name the function before it.
 */
static __always_inline bool entered_by_syscall(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u8 insn[2];
	__u64 ip;

	if (!regs)
		return true;
	ip = BPF_CORE_READ(regs, ip);
	/* Code not in memory was not just run: the first instruction of an image an exec has
	 * just set up (its page not faulted in yet), not one a system call returns to. */
	if (ip < 2 || bpf_probe_read_user(insn, sizeof(insn), (void *)(ip - 2)))
		return false;
	return insn[0] == 0x0f && insn[1] == 0x05;
}

/* The user stack by unwind tables into stack[], or -1 to fall back to frame pointers. */
static __always_inline long table_user_stack(struct bpf_perf_event_data *ctx,
					     struct task_struct *task, struct oncpu_event *e,
					     __u64 *stack, __u32 *proc_flags)
{
	struct unwind_outcome out = {};
	__u64 ip, sp, bp;
	long n;

	if (!unwind_tables || !user_regs(ctx, task, &ip, &sp, &bp))
		return -1;
	n = unwind__user_stack(e->pid, ip, sp, bp, true, stack, &out);
	/* Walked by BPF's own table: what it leaves in the ring is named at its exit. */
	if (out.no_proc)
		known_pids__sampled(e->pid);
	if (out.gone) {
		e->flags |= ONCPU_F_USER_EXEC;
		*proc_flags = UNWIND_PROC_NO_TRACECTX;
		return 0;
	}
	if (n < 0 && out.no_proc) {
		/* Not learned yet (a new process, or a new image: its table is on its way): the
		 * leaf alone, marked truncated, rather than frame pointers' guess. The lookups a
		 * table would have spared are made. */
		e->flags |= ONCPU_F_USTACK_TRUNCATED | ONCPU_F_UNWIND_MISS;
		*proc_flags = UNWIND_PROC_INTERP;
		return 1;
	}
	if (n < 0)
		return -1;
	if (out.truncated) {
		e->flags |= ONCPU_F_USTACK_TRUNCATED;
		if (n >= UNWIND_MAX_FRAMES)
			count(ONCPU_CNT_USTACK_TRUNCATED);
	}
	if (out.miss)
		e->flags |= ONCPU_F_UNWIND_MISS;
	*proc_flags = out.proc_flags;
	return n;
}

/*
 * The probed calls the thread is inside, each flagged as sampled so that its end is matched with
 * this sample. A thread that never entered one has no storage: one pointer test.
 */
static __always_inline void probed_calls(struct task_struct *task, struct oncpu_event *e)
{
	struct probes_thread *t = bpf_task_storage_get(&probe_threads, task, 0, 0);
	__u32 n;

	e->nr_calls = 0;
	if (!t)
		return;
	n = t->depth;
	for (int i = 0; i < ONCPU_MAX_CALLS && i < PROBES_MAX_NEST; i++) {
		if ((__u32)i >= n)
			break;
		t->calls[i].flags |= PROBES_CALL_SAMPLED;
		e->call_probe[i] = t->calls[i].probe;
		e->call_start[i] = t->calls[i].start_ns;
		e->nr_calls = i + 1;
	}
}

SEC("perf_event")
int oncpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task;
	struct oncpu_event *e;
	__u32 zero = 0;
	long kn, un;
	__u64 pn, off, psize;
	struct python__out *pbuf;
	__u64 size, flags, *sent;
	__u32 proc_flags = 0;
	bool walked, mapped;
	struct unwind_jit_exit *jx;

	if ((__u32)id == 0) {
		count(ONCPU_CNT_IDLE);
		return 0;
	}
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;

	e->time_ns = bpf_ktime_get_ns();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->flags = 0;
	e->nr_python = 0;
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	task = bpf_get_current_task_btf();
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		e->flags |= ONCPU_F_KTHREAD;
	/* Exiting, past the release of its memory: its user registers point at nothing. */
	else if (!BPF_CORE_READ(task, mm))
		e->flags |= ONCPU_F_USER_EXITED;
	e->pad2 = 0;
	probed_calls(task, e);

	/* A sample that struck user code has no kernel stack: don't pay for finding that out. */
	kn = in_user_mode(ctx) ? 0 :
				 bpf_get_stack(ctx, e->stack, ONCPU_MAX_KSTACK * sizeof(__u64), 0);
	if (kn < 0) {
		count(ONCPU_CNT_KSTACK_ERROR);
		kn = 0;
	}
	kn /= sizeof(__u64);
	if (kn > ONCPU_MAX_KSTACK)
		kn = ONCPU_MAX_KSTACK;
	if (kn && !(e->flags & ONCPU_F_KTHREAD) && !entered_by_syscall(task))
		e->flags |= ONCPU_F_USER_PC_EXACT;

	/*
	 * LuaJIT's frames first: its walk says where the native one is to start past trace code
	 * (bpf/unwind_jit.bpf.h), which is cleared by the end of the sample. Its count waits in
	 * the event: one verifier state after this, whichever way it went.
	 */
	jx = unwind__jit_slot();
	if (jx)
		jx->sp = 0;
	if (!(e->flags & (ONCPU_F_KTHREAD | ONCPU_F_USER_EXITED)) && lua__jit_proc(e->pid))
		e->nr_python = interp__walk(e->pid, lua_regs(ctx, task));
	un = 0;
	if (!(e->flags & (ONCPU_F_KTHREAD | ONCPU_F_USER_EXITED)))
		un = table_user_stack(ctx, task, e, &e->stack[kn], &proc_flags);
	else
		proc_flags = UNWIND_PROC_NO_TRACECTX; /* (nothing in user memory to read) */
	if (jx)
		jx->sp = 0;
	walked = un >= 0 && !(e->flags & ONCPU_F_KTHREAD);
	/* A process with a mapping table may say it publishes no trace context: most don't, and
	 * skip that (cold) hash lookup. */
	if ((!walked || !(proc_flags & UNWIND_PROC_NO_TRACECTX)) &&
	    tracectx__read(e->pid, e->trace_id, e->span_id))
		e->flags |= ONCPU_F_TRACE_CTX;
	/* A process whose mapping table held every pc of its stack has had its maps read since
	 * its libraries were mapped: no need to hurry user space. (At exec the table has only the
	 * executable and the loader: the libraries' pcs miss, and the first samples wake it.) */
	mapped = walked && !(e->flags & ONCPU_F_UNWIND_MISS);
	if (un < 0) {
		e->flags |= ONCPU_F_USTACK_FP;
		un = bpf_get_stack(ctx, &e->stack[kn], ONCPU_MAX_USTACK * sizeof(__u64),
				   BPF_F_USER_STACK);
		if (un < 0) {
			count(ONCPU_CNT_USTACK_ERROR);
			e->flags |= ONCPU_F_USTACK_ERROR;
			un = 0;
		}
		un /= sizeof(__u64);
		if (un >= ONCPU_MAX_USTACK) {
			un = ONCPU_MAX_USTACK;
			e->flags |= ONCPU_F_USTACK_TRUNCATED;
			count(ONCPU_CNT_USTACK_TRUNCATED);
		}
	}
	e->nr_kstack = kn;
	e->nr_ustack = un;

	/* Interpreted frames for a process known to be CPython or Lua (or one not yet learned:
	 * the lookups then say). */
	pn = *(volatile __u16 *)&e->nr_python;
	e->nr_python = 0;
	if (!pn && !(e->flags & ONCPU_F_KTHREAD) &&
	    (!walked || (proc_flags & UNWIND_PROC_INTERP))) {
		pn = interp__walk(e->pid, lua_regs(ctx, task));
	}
	/* The mask (not a comparison the compiler may apply to a copy) bounds it for the verifier:
	 * kn + un <= 254 anyway. */
	off = (kn + un) & 0xff;
	if (pn) {
		pbuf = bpf_map_lookup_elem(&python_frames, &zero);
		if (pn > ONCPU_MAX_PYTHON)
			pn = ONCPU_MAX_PYTHON;
		psize = pn * 2 * sizeof(__u64);
		barrier_var(psize);
		if (psize > ONCPU_MAX_PYTHON * 2 * sizeof(__u64))
			psize = 0;
		barrier_var(psize);
		if (pbuf && psize && !bpf_probe_read_kernel(&e->stack[off], psize, pbuf->words))
			e->nr_python = pn;
	}

	size = __builtin_offsetof(struct oncpu_event, stack) +
	       (kn + un + 2 * e->nr_python) * sizeof(__u64);
	if (size > sizeof(*e))
		size = sizeof(*e);
	/* How full the ring is (a cache miss: user space writes the consumer position) is looked
	 * at every RING_CHECK_EVERY samples of a CPU; a few samples more before a wakeup is
	 * nothing in a quarter of the ring. */
	sent = counters__slot(&counters, ONCPU_CNT_SAMPLES);
	flags = (!mapped && known_pids__young(e->pid)) ||
				(sent && !(*sent % RING_CHECK_EVERY) &&
				 ringbuf__filled(&events, &wakeup_bytes)) ?
			BPF_RB_FORCE_WAKEUP :
			BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&events, e, size, flags)) {
		count(ONCPU_CNT_DROP_RINGBUF);
		return 0;
	}
	if (sent)
		(*sent)++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
