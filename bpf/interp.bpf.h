/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_INTERP_BPF_H
#define AUTOPROF_INTERP_BPF_H

/*
 * Interpreted frames, whichever runtime the process runs: CPython's (bpf/python.bpf.h), else
 * PUC Lua's (bpf/lua.bpf.h). Both write pairs into the per-CPU python_frames buffer, which a
 * sample copies into its interpreter-frame slot (nr_python pairs); Lua's begin with their own
 * marker pair. The including .bpf.c has included "vmlinux.h", <bpf/bpf_helpers.h> and
 * <bpf/bpf_core_read.h> first.
 */
#include "python.bpf.h"
#include "lua.bpf.h"

/*
 * The current thread's interpreted frames into python_frames: the pairs written (0: none).
 * Its user registers are in the buffer's first words and sp is its stack pointer (Lua's walk
 * looks for its state there: bpf/lua.bpf.h). A global function: the verifier checks it once,
 * on its own, instead of at every path of the sampler that reaches it (the on-CPU program
 * took 906k of the verifier's 1M instructions with it inlined, 601k like this).
 */
__noinline __u32 interp__walk(__u32 pid, __u64 sp)
{
	__u32 n = python__walk(pid);

	return n ? n : lua__walk(pid, sp);
}

/* The buffer where the sampler writes the registers (NULL: none). */
static __always_inline __u64 *interp__regs(void)
{
	struct python__out *out;
	__u32 zero = 0;

	out = bpf_map_lookup_elem(&python_frames, &zero);
	return out ? out->words : NULL;
}

#endif
