/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PYTHON_BPF_H
#define AUTOPROF_PYTHON_BPF_H

/*
 * CPython frames of the sampled thread: its thread state is the one in the main interpreter's
 * list whose thread_id (pthread_self(), the thread pointer on x86-64 glibc) is the thread's
 * fsbase, so a thread running C code without the GIL still gets its own frames, never another
 * thread's. The frame chain is walked leaf first, one frame per bpf_loop() step; user space
 * names the code objects (src/runtime/python.c). The including .bpf.c has included "vmlinux.h",
 * <bpf/bpf_helpers.h> and <bpf/bpf_core_read.h> first.
 */
#include "python_procs.bpf.h"

/*
 * The walk's output, copied into the event after the native frames. The count lives here, not in
 * the loop's stack state: a value the verifier cannot know keeps it from verifying each step
 * once per count.
 */
struct python__out {
	__u64 n; /* words written */
	__u64 words[PYTHON_MAX_ENTRIES * 2];
	/* The frame being looked at, read whole (its fields lie within the first 128 bytes; the
	 * rest is room for a field read at a masked offset). */
	__u8 frame[256];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct python__out);
} python_frames SEC(".maps");

struct python__walk {
	struct python_proc pp;
	__u64 frame;
};

static __always_inline int python__read(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

static long python__step(__u64 i, void *arg)
{
	struct python__walk *w = arg;
	__u64 code, instr, n;
	struct python__out *out;
	__u32 zero = 0, size;
	__u8 owner = 0, entry = 0;
	bool marker;

	out = bpf_map_lookup_elem(&python_frames, &zero);
	if (!out)
		return 1;
	n = out->n;
	size = w->pp.frame_size & 127;
	/* One read per frame: its fields at their offsets in the copy. */
	if (!w->frame || n >= PYTHON_MAX_ENTRIES * 2 - 3 || !size ||
	    python__read(out->frame, size, w->frame))
		return 1;
	code = *(__u64 *)&out->frame[w->pp.frame_code & 127];
	instr = *(__u64 *)&out->frame[w->pp.frame_instr & 127];
	if (w->pp.frame_kind == PYTHON_FRAME_OBJECT)
		instr &= 0xffffffff; /* f_lasti, an int */
	if (w->pp.frame_owner != PYTHON_NO_FIELD)
		owner = out->frame[w->pp.frame_owner & 127];
	if (w->pp.frame_is_entry != PYTHON_NO_FIELD)
		entry = out->frame[w->pp.frame_is_entry & 127];
	/* 3.12+: the evaluation loop's shim frame is where one of its calls begins. */
	if (w->pp.version >= 0x030c && owner == PYTHON_OWNED_BY_CSTACK) {
		marker = true;
	} else {
		out->words[n++] = code;
		out->words[n++] = instr;
		/* 3.10 runs one frame per call of the loop; 3.11 marks the first one it ran. */
		marker = w->pp.frame_kind == PYTHON_FRAME_OBJECT || entry;
	}
	if (marker) {
		out->words[n++] = 0;
		out->words[n++] = 0;
	}
	out->n = n;
	w->frame = *(__u64 *)&out->frame[w->pp.frame_previous & 127];
	return 0;
}


/* The sampled thread's thread state, or 0 (no Python in this thread, or an unreadable list). */
static __always_inline __u64 python__tstate(const struct python_proc *pp, __u64 fsbase)
{
	__u32 self = (__u32)bpf_get_current_pid_tgid();
	__u64 interp = 0, ts = 0, tid, *cached;

	cached = bpf_map_lookup_elem(&python_threads, &self);
	if (cached && *cached) {
		ts = *cached;
		if (!python__read(&tid, sizeof(tid), ts + pp->tstate_thread_id) && tid == fsbase)
			return ts;
	}
	if (python__read(&interp, sizeof(interp), pp->runtime + pp->runtime_interp_head) ||
	    !interp || python__read(&ts, sizeof(ts), interp + pp->interp_tstate_head))
		return 0;
	for (int i = 0; i < PYTHON_MAX_THREADS && ts; i++) {
		if (python__read(&tid, sizeof(tid), ts + pp->tstate_thread_id))
			return 0;
		if (tid == fsbase) {
			bpf_map_update_elem(&python_threads, &self, &ts, BPF_ANY);
			return ts;
		}
		if (python__read(&ts, sizeof(ts), ts + pp->tstate_next))
			return 0;
	}
	return 0;
}

/*
 * Walks the current thread's Python frames into python_frames: returns the pairs written (0:
 * not a Python process, or no frames).
 */
static __always_inline __u32 python__walk(__u32 pid)
{
	struct python__walk w = {};
	struct python__out *out;
	struct python_proc *pp;
	__u32 zero = 0;
	struct task_struct *task;
	__u64 fsbase, ts;

	pp = bpf_map_lookup_elem(&python_procs, &pid);
	if (!pp)
		return 0;
	__builtin_memcpy(&w.pp, pp, sizeof(w.pp));
	task = (struct task_struct *)bpf_get_current_task();
	fsbase = BPF_CORE_READ(task, thread.fsbase);
	if (!fsbase)
		return 0;
	ts = python__tstate(&w.pp, fsbase);
	if (!ts || python__read(&w.frame, sizeof(w.frame), ts + w.pp.tstate_frame))
		return 0;
	if (w.pp.cframe_current_frame != PYTHON_NO_FIELD &&
	    (!w.frame ||
	     python__read(&w.frame, sizeof(w.frame), w.frame + w.pp.cframe_current_frame)))
		return 0;
	out = bpf_map_lookup_elem(&python_frames, &zero);
	if (!out)
		return 0;
	out->n = 0;
	bpf_loop(PYTHON_MAX_ENTRIES, python__step, &w, 0);
	return out->n / 2;
}

#endif
