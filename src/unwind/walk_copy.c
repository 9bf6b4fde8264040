// SPDX-License-Identifier: GPL-2.0-only
/*
 * Walks stacks copied out of a process (the preload shim's copies) in user space, by the rows
 * BPF reads: the step is bpf/unwind_step.h's, its table lookups bounds-checked reads of the
 * unwinder's mmapped arrays, its stack reads reads of the copy.
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <linux/types.h>

#include "unwind/chunks.h"
#include "unwind/unwind.h"
#include "unwind/unwind_priv.h"

/*
 * The shared searches take no walk: what they read is per thread, set by each walk. The hint
 * (the last mapping a frame was in) is checked before use, so one left by another process's
 * walk only costs the search.
 */
static __thread const struct unwind_tables *tables;
static __thread __u32 map_hint;

struct unwind_walk_env {
	const unsigned char *copy; /* the process's memory at [base, base + len) */
	__u64 base, len;
	__u32 depth; /* pcs the caller has room for */
};

static inline const void *table_elem(const void *base, size_t stride, __u32 n, __u32 i)
{
	return i < n ? (const char *)base + (size_t)i * stride : NULL;
}

static inline int copy_read(const struct unwind_walk_env *e, __u64 *dst, __u64 addr)
{
	if (addr < e->base || e->len < sizeof(*dst) || addr - e->base > e->len - sizeof(*dst))
		return -EFAULT;
	memcpy(dst, e->copy + (addr - e->base), sizeof(*dst));
	return 0;
}

#define UNWIND_SEARCH static inline
#define UNWIND_HINT() (&map_hint)
#define UNWIND_FILE(slot)                                                                  \
	((const struct unwind_file *)table_elem(tables->files, UNWIND_FILE_STRIDE,        \
						 tables->nfiles, slot))
#define UNWIND_PAGE(e) ((const struct unwind_page_pair *)chunks__elem(tables->elems, e))
#define UNWIND_ROW(idx) ((const struct unwind_row *)chunks__elem(tables->elems, idx))
#define UNWIND_READ(w, dst, addr) copy_read(&(w)->env, dst, addr)
#define UNWIND_RET_ADDR(w, ra) (ra)
#define UNWIND_DEPTH(w) ((w)->env.depth)
/* No walk cache: a copy is walked once, and its tables are warm in this process. */
#define UNWIND_CACHE_GET(w, i) UNWIND_RULE_NONE
#define UNWIND_CACHE_PUT(w, i, rule) ((void)0)
#define UNWIND_CACHE_STOP(w) ((void)0)
#define UNWIND_VMA(w, pc) (-1) /* a copy has no kernel to ask */
#define UNWIND_KERNEL_TABLE(w) 0 /* user space's, copied */
#define UNWIND_AFTER_SYSCALL(w) 0 /* nor code: its leaf is a call's return anyway */
#define UNWIND_JAVA_FRAME(w, lo, hi) 0ULL /* copies are of preloaded programs' stacks */

#include "bpf/unwind_step.h"

int unwinder__find_row(struct unwinder *u, const struct unwind_file *f, uint32_t off)
{
	tables = unwinder__tables(u);
	return unwind__find_row(f, off);
}

int unwinder__proc(struct unwinder *u, uint32_t pid, struct unwind_proc *out)
{
	if (bpf_map_lookup_elem(unwinder__map_fd(u, "unwind_procs"), &pid, out))
		return -errno;
	return 0;
}

uint32_t unwinder__walk_copy(struct unwinder *u, const struct unwind_proc *proc, uint64_t pc,
			     uint64_t sp, uint64_t bp, const void *stack, size_t len, uint64_t *pcs,
			     uint32_t max, bool *truncated)
{
	struct unwind_walk w = {
		.pc = pc,
		.sp = sp,
		.bp = bp,
		.stack = (__u64 *)pcs,
		.proc = proc,
		/* pc is a return address: its rule is the call's, one byte back. */
		.interrupted = 0,
		.env = { .copy = stack, .base = sp, .len = len, .depth = max },
	};

	/* No unwinder (frame pointers only): proc is NULL, no table is looked at. */
	if (!u && proc)
		w.proc = NULL;
	tables = u ? unwinder__tables(u) : NULL;
	/* Each step either ends the walk or writes frame i: it ends by i == max at the latest. */
	for (__u64 i = 0; !unwind__step(i, &w); i++)
		;
	*truncated = w.stop != UNWIND_STOP_COMPLETE;
	return w.n;
}
