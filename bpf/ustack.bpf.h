/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_USTACK_BPF_H
#define AUTOPROF_USTACK_BPF_H

/*
 * The stack of a probed call, for the samplers that run in uprobes (memory.bpf.c,
 * gpumem.bpf.c): native frames by the unwind tables (frame pointers where there are none), then
 * the thread's interpreted frames (CPython's, Lua's). The including .bpf.c has included
 * "unwind.bpf.h" and "interp.bpf.h" first and defines `const volatile bool unwind_tables`.
 */

/* Where a stack walk starts: a pc with its stack and frame pointers. */
struct walk_start {
	__u64 pc, sp, bp;
};

struct ustack_out {
	bool truncated; /* stopped before the outermost frame */
	bool fp;	/* walked by frame pointers (no table for the process yet) */
	bool python;	/* worth walking interpreted frames: CPython or Lua, or not known yet */
};

/*
 * The native stack from `at` (the caller's registers right after a return) into stack[max],
 * by frame pointers from ctx when there is no table: the frames written.
 */
static __always_inline __u32 ustack__walk(struct pt_regs *ctx, __u32 pid,
					  const struct walk_start *at, __u64 *stack, __u32 max,
					  struct ustack_out *o)
{
	struct unwind_outcome out = {};
	long n = -1;

	if (unwind_tables)
		n = unwind__user_stack(pid, at->pc, at->sp, at->bp, false, stack, &out);
	o->truncated = out.truncated;
	o->python = n < 0 || (out.proc_flags & UNWIND_PROC_INTERP);
	o->fp = n < 0;
	if (n < 0) {
		n = bpf_get_stack(ctx, stack, max * sizeof(__u64), BPF_F_USER_STACK);
		if (n < 0)
			n = 0;
		n /= sizeof(__u64);
		o->truncated = n >= max;
	}
	if (n > max)
		n = max;
	return n;
}

/*
 * The current thread's interpreted frames into dst (max_pairs pairs at most), ctx the probe's
 * registers (the user code's: Lua's walk looks for its state there): the pairs written.
 */
static __always_inline __u32 ustack__interp(struct pt_regs *ctx, __u32 pid, __u64 *dst,
					    __u32 max_pairs)
{
	struct python__out *pbuf;
	__u64 *words = interp__regs(), sp = 0;
	__u32 zero = 0;
	__u64 pn, psize;

	if (words)
		LUA_REGS_FROM(ctx, words, sp);
	pn = interp__walk(pid, sp);
	if (!pn)
		return 0;
	pbuf = bpf_map_lookup_elem(&python_frames, &zero);
	if (!pbuf)
		return 0;
	if (pn > max_pairs)
		pn = max_pairs;
	psize = pn * 2 * sizeof(__u64);
	barrier_var(psize);
	if (psize > max_pairs * 2 * sizeof(__u64) || bpf_probe_read_kernel(dst, psize, pbuf->words))
		return 0;
	return pn;
}

#endif
