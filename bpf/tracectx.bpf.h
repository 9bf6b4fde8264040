/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_TRACECTX_BPF_H
#define AUTOPROF_TRACECTX_BPF_H

/*
 * Thread trace context (OTEP 4947, see src/collect/tracectx.h): the span the interrupted thread
 * published through its otel_thread_ctx_v1 pointer. The including .bpf.c has included
 * "vmlinux.h", <bpf/bpf_helpers.h> and <bpf/bpf_core_read.h> first.
 */

/* pid -> tp offset of otel_thread_ctx_v1 (user space fills it from tracectx__locate). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __s64);
} tracectx_offsets SEC(".maps");

/* The start of the record: the ids and the valid flag, all a sampler needs. */
struct tracectx__record {
	__u8 trace_id[16];
	__u8 span_id[8];
	__u8 valid;
};

/*
 * Reads the current thread's context: 1 and the ids when a valid span is active, else 0.
 *
 * Only for the thread being sampled (current): it is stopped here, so the record cannot change
 * under the read, which is what the standard's writers rely on (compiler fences only).
 * thread.fsbase is the value the kernel set at clone/arch_prctl and saved at the last switch;
 * glibc never writes FS base behind the kernel's back, so it is the live thread pointer.
 */
static __always_inline int tracectx__read(__u32 pid, __u8 trace_id[16], __u8 span_id[8])
{
	struct tracectx__record rec;
	struct task_struct *task;
	__u64 fsbase, ptr, lo, hi;
	__s64 *off;

	off = bpf_map_lookup_elem(&tracectx_offsets, &pid);
	if (!off)
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	fsbase = BPF_CORE_READ(task, thread.fsbase);
	/* A thread that never set up TLS (or a kernel thread) has nothing to point at. */
	if (!fsbase)
		return 0;
	if (bpf_probe_read_user(&ptr, sizeof(ptr), (const void *)(fsbase + *off)) || !ptr)
		return 0;
	/* Paged-out or unmapped records read as "no span": no faults are taken here. */
	if (bpf_probe_read_user(&rec, sizeof(rec), (const void *)ptr) || rec.valid != 1)
		return 0;
	__builtin_memcpy(&lo, rec.trace_id, sizeof(lo));
	__builtin_memcpy(&hi, rec.trace_id + 8, sizeof(hi));
	if (!lo && !hi)
		return 0;
	__builtin_memcpy(trace_id, rec.trace_id, sizeof(rec.trace_id));
	__builtin_memcpy(span_id, rec.span_id, sizeof(rec.span_id));
	return 1;
}

#endif
