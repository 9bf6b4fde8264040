/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_UNWIND_STEP_H
#define AUTOPROF_BPF_UNWIND_STEP_H

/*
 * One frame of a table walk (x86-64), written once for both walkers: BPF's over the live stack
 * (bpf/unwind.bpf.h) and user space's over a copy of one (src/unwind/walk_copy.c). Every access to
 * the tables and to stack memory goes through the includer's macros, so that BPF compiles to
 * the map lookups and probe reads it always had and user space to bounds-checked reads of the
 * mmapped arrays and of the copy:
 *
 *   struct unwind_walk_env   the includer's own fields of a walk
 *   UNWIND_SEARCH            how the two searches are declared (BPF: __noinline, global
 *                            functions the verifier checks once each)
 *   UNWIND_HINT()            __u32 * to the mapping the last frame was in, or NULL
 *   UNWIND_FILE(slot)        the file slot at a __u32 lvalue index, or NULL past the end
 *   UNWIND_PAGE(e), UNWIND_ROW(idx)
 *                            the page pair, the row, at a __u32 index of the elements
 *                            (bpf/unwind_abi.h), or NULL past the end
 *   UNWIND_READ(w, dst, addr)         0 when the 8 bytes of the stack at addr are in *dst
 *   UNWIND_RET_ADDR(w, ra)            the real return address for one read off the stack
 *   UNWIND_DEPTH(w)                   frames the walk may write
 *   UNWIND_CACHE_GET(w, i)            the cached rule of frame i (UNWIND_RULE()), or
 *                                     UNWIND_RULE_NONE: look it up
 *   UNWIND_CACHE_PUT(w, i, rule)      the rule frame i was found to have (UNWIND_CFA_NONE:
 *                                     frame pointer)
 *   UNWIND_CACHE_STOP(w)              frame i has no rule that can be cached (its pc is in no
 *                                     mapping, its file's rows are not in yet)
 *   UNWIND_KERNEL_TABLE(w)            1 when w->proc is not user space's (UNWIND_GEN_KERNEL), 0
 *   UNWIND_AFTER_SYSCALL(w)           whether w->pc follows a syscall instruction (0f 05)
 *   UNWIND_VMA(w, pc)                 0 when the mapping holding pc, outside w->proc's, is in
 *                                     w->vma (BPF asks the kernel), UNWIND_VMA_NONE when no
 *                                     mapping at all holds pc, -1 otherwise
 *
 * __u32/__u64 only, no libc.
 */
#include "unwind_abi.h"

/* Enough halvings for 2^24 rows and UNWIND_MAX_MAPPINGS mappings. */
#define UNWIND_ROW_STEPS 24
#define UNWIND_MAP_STEPS 9

/* Offsets in the kernel's rt_sigframe at the handler's return into __restore_rt: the return
 * popped pretcode, so rsp points at the ucontext, whose mcontext (struct sigcontext) starts 40
 * bytes in. */
#define UNWIND_SIG_RBP (40 + 80)
#define UNWIND_SIG_RSP (40 + 120)
#define UNWIND_SIG_RIP (40 + 128)

enum unwind_stop {
	UNWIND_GO_ON = 0,
	UNWIND_STOP_COMPLETE,
	UNWIND_STOP_DEPTH,
	UNWIND_STOP_READ,
	UNWIND_STOP_RULE,
	UNWIND_STOP_NOINFO,
	UNWIND_STOP_PENDING,
	UNWIND_STOP_NOROOM,
	/* The leaf is in no mapping of the address space: the registers are those of an image
	 * an exec has replaced since. There is no user stack to walk, none cut short. */
	UNWIND_STOP_GONE,
};

#define UNWIND_VMA_NONE (-2)

struct unwind_walk {
	__u64 pc, sp, bp;
	__u64 *stack; /* UNWIND_DEPTH(w) slots for the user frames */
	const struct unwind_proc *proc;
	__u32 n;      /* user frames written */
	__u32 stop;   /* enum unwind_stop */
	__u32 interrupted; /* pc was interrupted, not a return address (leaf, after a signal) */
	__u32 miss;
	__u32 table_frames, fp_frames;
	struct unwind_mapping vma; /* the last found by UNWIND_VMA() */
	struct unwind_walk_env env;
};

/* Index of the mapping holding pc, or -1. */
UNWIND_SEARCH int unwind__find_mapping(const struct unwind_proc *proc, __u64 pc)
{
	__u32 lo = 0, hi, *hint = UNWIND_HINT();

	if (!proc)
		return -1;
	hi = proc->nr;
	if (hint && *hint < hi && *hint < UNWIND_MAX_MAPPINGS) {
		const struct unwind_mapping *m = &proc->maps[*hint];

		if (pc >= m->start && pc - m->start < m->len)
			return *hint;
	}
	if (hi > UNWIND_MAX_MAPPINGS)
		hi = UNWIND_MAX_MAPPINGS;
	for (int i = 0; i < UNWIND_MAP_STEPS && lo < hi; i++) {
		__u32 mid = (lo + hi) / 2;
		const struct unwind_mapping *m;

		if (mid >= UNWIND_MAX_MAPPINGS)
			return -1;
		m = &proc->maps[mid];
		if (pc < m->start) {
			hi = mid;
		} else if (pc - m->start >= m->len) {
			lo = mid + 1;
		} else {
			if (hint)
				*hint = mid;
			return mid;
		}
	}
	return -1;
}

/* Element index of the file's last row at or before off, or -1. */
UNWIND_SEARCH int unwind__find_row(const struct unwind_file *f, __u32 off)
{
	__u32 page, k, e, lo, hi;
	const struct unwind_page_pair *p;

	if (!f || !f->row_count)
		return -1;
	page = off >> UNWIND_PAGE_SHIFT;
	if (page < f->first_page)
		return -1;
	k = page - f->first_page;
	hi = f->row_start + f->row_count;
	if (k >= f->page_count) {
		/* Past the last row's page: the last row rules (it closes the file's code). */
		lo = hi - 1;
	} else {
		k += f->page_start;
		e = k >> 1;
		p = UNWIND_PAGE(e);
		if (!p)
			return -1;
		lo = p->row[k & 1];
		if (k + 1 < f->page_start + f->page_count) {
			k++;
			/* Most often the same element: no second lookup. */
			if (k >> 1 != e) {
				e = k >> 1;
				p = UNWIND_PAGE(e);
				if (!p)
					return -1;
			}
			/* The row covering the next page's first byte may start there. */
			hi = p->row[k & 1] + 1;
		}
	}
	/* The answer is in [lo, hi) unless off is before the file's first row. */
	{
		__u32 start = lo;

		for (int i = 0; i < UNWIND_ROW_STEPS && lo < hi; i++) {
			__u32 mid = lo + (hi - lo) / 2;
			const struct unwind_row *r = UNWIND_ROW(mid);

			if (!r)
				return -1;
			if (r->pc <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo == start ? -1 : (int)(lo - 1);
	}
}

/* Follows the frame pointer: the caller's rbp at [rbp], its return address above it. */
static __always_inline void unwind__fp_step(struct unwind_walk *w)
{
	__u64 ra, bp;

	if (!w->bp) {
		/* The ABI's outermost frame has rbp 0; for code we have no info for, this is
		 * as far as anyone can go. */
		w->stop = w->n == 1 && !w->fp_frames && !w->table_frames ? UNWIND_STOP_NOINFO :
									   UNWIND_STOP_COMPLETE;
		return;
	}
	if (w->bp < w->sp || UNWIND_READ(w, &ra, w->bp + 8) || UNWIND_READ(w, &bp, w->bp)) {
		w->stop = UNWIND_STOP_READ;
		return;
	}
	w->sp = w->bp + 16;
	w->bp = bp;
	w->pc = UNWIND_RET_ADDR(w, ra);
	w->interrupted = 0;
	w->fp_frames++;
}

/* One frame: iteration i writes frame i (so i, not a count of ours, indexes the array: the
 * verifier sees the same state every iteration). Nonzero: the walk is over (w->stop says why).
 * The signature of a bpf_loop() callback. */
static long unwind__step(__u64 i, void *arg)
{
	struct unwind_walk *w = arg;
	const struct unwind_mapping *m;
	const struct unwind_file *f;
	const struct unwind_row *r;
	__u64 cfa, ra, bp, off, rule, start;
	__u32 slot, file_off;
	int idx;

	if (!w->pc) {
		w->stop = UNWIND_STOP_COMPLETE;
		return 1;
	}
	if (i >= UNWIND_DEPTH(w)) {
		w->stop = UNWIND_STOP_DEPTH;
		return 1;
	}
	/* Consumers step every frame past the leaf back by one byte, into the call: a pc that
	 * was interrupted (after a signal frame) is already in place, so it is stored one on. */
	w->stack[i] = w->pc + (w->interrupted && i > 0);
	w->n = i + 1;

	rule = UNWIND_CACHE_GET(w, i);
	if (rule != UNWIND_RULE_NONE)
		goto apply;
	idx = unwind__find_mapping(w->proc, w->pc);
	/* (Without a table there is no index: said again for the verifier, which sees the
	 * search as a function of its own.) */
	if (idx < 0 || !w->proc) {
		/* Not cached: the miss must be seen again, to have the maps read again. Code
		 * mapped since they were read (a library, JIT code) is not followed by a guess:
		 * the stack ends here, marked truncated, until they are read again. Without a
		 * process table at all (frame pointers only, by choice) they are followed. */
		w->miss = 1;
		/* The kernel's own mapping, where its file's table is known: followed, never
		 * cached (the next maps read may place something else there). */
		if (!w->proc)
			goto fp_stop;
		idx = UNWIND_VMA(w, w->pc);
		if (!idx) {
			UNWIND_CACHE_STOP(w);
			start = w->vma.start;
			file_off = w->vma.file_off;
			slot = w->vma.file;
			w->stack[i] = UNWIND_FRAME(slot, w->stack[i] - start + file_off);
			goto mapped;
		}
		if (idx == UNWIND_VMA_NONE && i == 0) {
			w->stop = UNWIND_STOP_GONE;
			return 1;
		}
		goto pending;
	}
	/* A no-op (the search returns an index below the size) the verifier can see. */
	m = &w->proc->maps[(__u32)idx & (UNWIND_MAX_MAPPINGS - 1)];
	/* Scalars from here on, whichever way the mapping was found: one state for the
	 * verifier to follow. */
	start = m->start;
	file_off = m->file_off;
	slot = m->file;
mapped:
	if (slot == UNWIND_NO_FILE) {
		/* A JVM's interpreter: its frame says which method it runs. Read at every walk,
		 * so never cached. */
		if (w->proc && w->proc->java_hi) {
			__u64 jw = UNWIND_JAVA_FRAME(w, w->proc->java_lo, w->proc->java_hi);

			if (jw) {
				w->stack[i] = jw;
				goto fp_stop;
			}
		}
		goto fp_put;
	}
	f = UNWIND_FILE(slot);
	if (!f)
		goto fp_stop;
	/* No rows yet: a table being built ends the walk (frame pointers would guess what its
	 * rows are about to say); evicted rows or none for good leave frame pointers. Nothing
	 * is cached from here on: what the rows will say is not known. */
	if (!f->row_count) {
		if (f->flags & UNWIND_FILE_PENDING)
			goto pending;
		if (f->flags & UNWIND_FILE_NO_ROOM) {
			UNWIND_CACHE_STOP(w);
			w->stop = UNWIND_STOP_NOROOM;
			return 1;
		}
		if (f->flags & UNWIND_FILE_FP)
			goto fp_put;
		goto fp_stop;
	}
	/* A return address is past the call, maybe past the function's end (noreturn calls):
	 * its rule is the one of the call instruction. */
	off = w->pc - start + file_off - !w->interrupted;
	idx = unwind__find_row(f, (__u32)off);
	if (idx < 0)
		goto fp_put;
	slot = idx;
	r = UNWIND_ROW(slot);
	if (!r)
		goto fp_stop;
	rule = UNWIND_RULE(UNWIND_ROW_CFA_TYPE(r->rule), UNWIND_ROW_CFA_OFF(r->rule),
			   UNWIND_ROW_RBP_TYPE(r->rule), UNWIND_ROW_RBP_OFF(r->rule));
	UNWIND_CACHE_PUT(w, i, rule);

apply:
	switch (UNWIND_RULE_CFA_TYPE(rule)) {
	case UNWIND_CFA_UNDEFINED:
		w->stop = UNWIND_STOP_COMPLETE;
		return 1;
	case UNWIND_CFA_RSP:
		cfa = w->sp + UNWIND_RULE_CFA_OFF(rule);
		break;
	case UNWIND_CFA_RBP:
	case UNWIND_CFA_RBP_SWITCH:
		if (!w->bp) {
			w->stop = UNWIND_STOP_READ;
			return 1;
		}
		cfa = w->bp + UNWIND_RULE_CFA_OFF(rule);
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + 8 + ((w->pc & 15) >= (__u64)UNWIND_RULE_CFA_OFF(rule) ? 8 : 0);
		break;
	case UNWIND_CFA_SIGNAL:
		/* The interrupted context: the next pc is where the signal struck, not a return
		 * address. */
		if (UNWIND_READ(w, &ra, w->sp + UNWIND_SIG_RIP) ||
		    UNWIND_READ(w, &cfa, w->sp + UNWIND_SIG_RSP) ||
		    UNWIND_READ(w, &bp, w->sp + UNWIND_SIG_RBP)) {
			w->stop = UNWIND_STOP_READ;
			return 1;
		}
		/* The trampoline was entered by a return, not a call: name its own address. */
		w->stack[i] = w->pc + 1;
		w->pc = ra;
		w->sp = cfa;
		w->bp = bp;
		w->interrupted = 1;
		w->table_frames++;
		return 0;
	case UNWIND_CFA_NONE:
		/* A leaf in code its file's CFI leaves out, struck in a system call: a syscall
		 * stub (glibc's clone and clone3 end their CFI before the syscall, the parent's
		 * return is a plain ret). It has pushed nothing: its return address is at rsp,
		 * where a frame pointer would skip its caller, or read whatever rbp holds. */
		if (i == 0 && w->interrupted && UNWIND_AFTER_SYSCALL(w)) {
			cfa = w->sp + 8;
			goto cfa_found;
		}
		goto fp;
	default:
		w->stop = UNWIND_STOP_RULE;
		return 1;
	}
cfa_found:
	/* The stack grows down: a caller's frame is above its callee's, unless the callee ran
	 * on another stack. */
	if ((cfa <= w->sp && UNWIND_RULE_CFA_TYPE(rule) != UNWIND_CFA_RBP_SWITCH) ||
	    UNWIND_READ(w, &ra, cfa - 8)) {
		w->stop = UNWIND_STOP_READ;
		return 1;
	}
	if (UNWIND_RULE_RBP_TYPE(rule) == UNWIND_RBP_OFFSET) {
		if (UNWIND_READ(w, &bp, cfa + UNWIND_RULE_RBP_OFF(rule))) {
			w->stop = UNWIND_STOP_READ;
			return 1;
		}
		w->bp = bp;
	} else if (UNWIND_RULE_RBP_TYPE(rule) != UNWIND_RBP_SAME) {
		w->bp = 0;
	}
	w->sp = cfa;
	w->pc = UNWIND_RET_ADDR(w, ra);
	w->interrupted = 0;
	w->table_frames++;
	return 0;
pending:
	UNWIND_CACHE_STOP(w);
	w->stop = UNWIND_STOP_PENDING;
	return 1;
fp_put:
	UNWIND_CACHE_PUT(w, i, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0));
	goto fp;
fp_stop:
	UNWIND_CACHE_STOP(w);
fp:
	unwind__fp_step(w);
	return w->stop != UNWIND_GO_ON;
}

#endif
