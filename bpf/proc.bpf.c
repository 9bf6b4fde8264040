// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process life cycle for every profiler: exec (learn the new image's mappings while the process
 * is alive, so that short-lived processes still symbolize) and exit (drop per-process state).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "proc.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} proc_events SEC(".maps");

#include "known_pids.bpf.h"
#include "python_procs.bpf.h"
#include "tracectx.bpf.h"
#include "unwind.h"

/*
 * The unwinder's mapping tables (src/unwind/unwind.c's map, shared before load; a placeholder
 * of its own with unwind.mode=fp). A new image drops its old one: walked by the old image's
 * mappings, its first samples would be named by files it no longer has.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROC_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} proc_counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&proc_counters, &idx);

	if (c)
		(*c)++;
}

static __always_inline int emit(__u32 type, struct task_struct *p)
{
	struct proc_ev *e;

	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		__u32 pid = BPF_CORE_READ(p, tgid);

		bpf_map_delete_elem(&known_pids, &pid);
		bpf_map_delete_elem(&tracectx_offsets, &pid);
		bpf_map_delete_elem(&python_procs, &pid);
		bpf_map_delete_elem(&unwind_procs, &pid);
		count(PROC_CNT_DROP_RINGBUF);
		return 0;
	}
	e->type = type;
	e->pid = BPF_CORE_READ(p, tgid);
	bpf_map_delete_elem(&known_pids, &e->pid);
	/* A new image (or none) publishes its thread context elsewhere, if at all. */
	bpf_map_delete_elem(&tracectx_offsets, &e->pid);
	bpf_map_delete_elem(&python_procs, &e->pid);
	bpf_map_delete_elem(&unwind_procs, &e->pid);
	e->time_ns = bpf_ktime_get_ns();
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	/* Exec must reach user space at once: the process may live only milliseconds. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	count(PROC_CNT_EXEC);
	return emit(PROC_EV_EXEC, p);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	/* Threads exit all the time; only the group leader's exit ends the process. */
	if (BPF_CORE_READ(p, pid) != BPF_CORE_READ(p, tgid))
		return 0;
	count(PROC_CNT_EXIT);
	return emit(PROC_EV_EXIT, p);
}

char LICENSE[] SEC("license") = "GPL";
