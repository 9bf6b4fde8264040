/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UNWIND_JIT_BPF_H
#define AUTOPROF_UNWIND_JIT_BPF_H

/*
 * Where the sampled thread's JIT code was entered from, said by its runtime's walk before the
 * native one runs (LuaJIT: the C frame its VM runs in, bpf/lua.bpf.h): trace code has neither
 * unwind info nor frame pointers, and the table walk (bpf/unwind.bpf.h) starts there instead.
 * Per CPU, set and cleared within one sample of the on-CPU sampler (sp 0: nothing said), so
 * that no other walk, nor a later sample, takes it.
 */
struct unwind_jit_exit {
	__u64 pc, sp, bp; /* the frame's caller: where it returns, its stack pointer and rbp */
	/* Taken whatever the leaf: the runtime knows it is in its own code whose rows are wrong
	 * there (LuaJIT's interpreter calls helpers, its modulo, from inside its frame). Else
	 * only for a leaf in code mapped by no file (a trace's), or in [lo, hi): the runtime's
	 * own code, a helper the trace called (whose walk would lead into the trace). */
	__u64 any_leaf;
	__u64 lo, hi;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_jit_exit);
} unwind_jit_exits SEC(".maps");

static __always_inline struct unwind_jit_exit *unwind__jit_slot(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&unwind_jit_exits, &zero);
}

#endif
