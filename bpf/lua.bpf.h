/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LUA_BPF_H
#define AUTOPROF_LUA_BPF_H

/*
 * PUC Lua frames of the sampled thread (5.1, 5.3, 5.4). Lua keeps no global "current state":
 * the interpreter holds its lua_State in a register while it runs (r15 in Debian's 5.4 builds,
 * 99.8 % of samples), and so do the C functions it calls, which take it as their first
 * argument. So the callee-saved and argument registers are tried, each taken only if it points
 * at a thread object (type tag LUA_TTHREAD) whose stack pointers are in order; the state found
 * is remembered per thread for samples that strike code holding none (libc, the kernel), and
 * used then only while it is not suspended. The CallInfo chain of that state is walked leaf
 * first, one record per bpf_loop() step, into the interpreter-frame buffer Python's walk uses
 * (python_frames: the including .bpf.c has included "python.bpf.h" first); user space names
 * the functions and places them among the native frames (src/runtime/lua.c).
 */
#include "lua_procs.bpf.h"
#include "unwind_jit.bpf.h"

/*
 * The registers tried for the running lua_State, in this order: r15, r14, r13, r12, rbx, rbp,
 * rdi, rsi, rdx (LuaJIT's interpreter keeps its frame's base in rdx, its next instruction in
 * rbx: bpf/lua.bpf.h's LuaJIT part). The sampler writes them into the first words of python_frames
 * (nothing else writes there before the walk; the BPF stack has no room for them) with
 * LUA_REGS_FROM (a BPF context's pt_regs: whole-word loads, each its own, for the verifier refuses
 * a context pointer moved by an offset) or LUA_REGS_READ (the kernel's), and passes the stack
 * pointer.
 */
#define LUA_NR_REGS 9
#define LUA_REGS_FROM(regs, words, sp)                                                             \
	do {                                                                                       \
		(words)[0] = *(volatile __u64 *)&(regs)->r15;                                      \
		(words)[1] = *(volatile __u64 *)&(regs)->r14;                                      \
		(words)[2] = *(volatile __u64 *)&(regs)->r13;                                      \
		(words)[3] = *(volatile __u64 *)&(regs)->r12;                                      \
		(words)[4] = *(volatile __u64 *)&(regs)->bx;                                       \
		(words)[5] = *(volatile __u64 *)&(regs)->bp;                                       \
		(words)[6] = *(volatile __u64 *)&(regs)->di;                                       \
		(words)[7] = *(volatile __u64 *)&(regs)->si;                                       \
		(words)[8] = *(volatile __u64 *)&(regs)->dx;                                       \
		(sp) = *(volatile __u64 *)&(regs)->sp;                                             \
	} while (0)
#define LUA_REGS_READ(regs, words, sp)                                                             \
	do {                                                                                       \
		(words)[0] = BPF_CORE_READ(regs, r15);                                             \
		(words)[1] = BPF_CORE_READ(regs, r14);                                             \
		(words)[2] = BPF_CORE_READ(regs, r13);                                             \
		(words)[3] = BPF_CORE_READ(regs, r12);                                             \
		(words)[4] = BPF_CORE_READ(regs, bx);                                              \
		(words)[5] = BPF_CORE_READ(regs, bp);                                              \
		(words)[6] = BPF_CORE_READ(regs, di);                                              \
		(words)[7] = BPF_CORE_READ(regs, si);                                              \
		(words)[8] = BPF_CORE_READ(regs, dx);                                              \
		(sp) = BPF_CORE_READ(regs, sp);                                                    \
	} while (0)

/*
 * Stack words looked at for a state when no register holds one; of those that could be heap
 * addresses, how many have their tag byte read (code and data pointers are many in a C frame:
 * glibc's system() keeps several sigactions there), and how many of those with a thread's tag
 * are checked whole.
 */
#define LUA_SCAN_WORDS (PYTHON_MAX_ENTRIES * 2 - 2)
/* Past them, the LuaJIT interpreter's PC and BASE registers wait for the walk (rbx, rdx). */
#define LUA_WORD_RBX   LUA_SCAN_WORDS
#define LUA_WORD_RDX   (LUA_SCAN_WORDS + 1)
#define LUA_SCAN_PEEKS 64
#define LUA_SCAN_TRIES 8

/* The walk's state, shared by its two callbacks: finding the state, then its calls. */
struct lua__walk {
	struct lua_proc lp;
	__u64 ci, base_ci, leaf_pc;
	__u64 L;		  /* the state found */
	__u64 sp;		  /* the thread's stack pointer: words near it are not states */
	__u8 first, peeks, tries; /* candidates looked at (the BPF stack is short: bytes) */
	__u8 at;		  /* the word where L was found */
	__u8 skip;		  /* LuaJIT: the next frame is a vararg call's first */
	__u8 bottom;		  /* LuaJIT: the walk reached the stack's first frame */
	__u8 hops;		  /* LuaJIT: resumers walked */
	__u64 cframe;		  /* LuaJIT: L->cframe */
};

static __always_inline int lua__read(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

static __always_inline __u64 lua__word(const __u8 *b, __u16 off)
{
	return *(const __u64 *)&b[off & 0x78];
}

/*
 * Whether L is a lua_State: its header's tag says thread, it has a global state and a current
 * CallInfo, and its stack pointers are in order. Its first 128 bytes are left in state (the
 * per-CPU frame buffer: the BPF stack has no room for them).
 */
static __always_inline bool lua__is_state(const struct lua_proc *lp, __u64 L, __u8 *state)
{
	__u64 top, stack, last, g, main = 0, mg = 0;

	if (L < 4096 || (L & 7) || L >= (1ULL << 47) || lua__read(state, 128, L))
		return false;
	/* PUC's CommonHeader: GCObject *next, lu_byte tt (LUA_TTHREAD: 8 in every release);
	 * LuaJIT's GCHeader: nextgc, marked, gct (~LJ_TTHREAD: 6). */
	if (state[lp->tag_off & 15] != lp->tag_thread)
		return false;
	top = lua__word(state, lp->l_top);
	stack = lua__word(state, lp->l_stack);
	last = lua__word(state, lp->l_stack_last);
	g = lua__word(state, lp->l_g);
	if (!g || !lua__word(state, lp->l_ci) || !stack || stack > top || stack > last ||
	    top > last + 64 * 16)
		return false;
	/*
	 * Its global state's main thread is it, or a thread of that same global state. Else a
	 * word that only looks like one (a thread's tag byte, plausible stack pointers) would be
	 * walked, and kept as the thread's state for good: the process's frames lost.
	 */
	if (lp->g_mainthread == LUA_NO_FIELD)
		return true;
	if (lua__read(&main, sizeof(main), g + lp->g_mainthread) || !main)
		return false;
	return main == L || (!lua__read(&mg, sizeof(mg), main + lp->l_g) && mg == g);
}

static long lua__step(__u64 i, void *arg)
{
	struct lua__walk *w = arg;
	struct python__out *out;
	__u64 func, tv[2], n, a, b;
	__u32 zero = 0;
	__u8 tag, *cl;

	out = bpf_map_lookup_elem(&python_frames, &zero);
	if (!out)
		return 1;
	n = out->n;
	if (!w->ci || n >= LUA_MAX_ENTRIES * 2 || n >= PYTHON_MAX_ENTRIES * 2 - 2)
		return 1;
	if (w->lp.flags & LUA_PROC_CI_ARRAY) {
		if (w->ci < w->base_ci)
			return 1;
	}
	/* The record, read whole into the frame buffer. */
	if (lua__read(out->frame, w->lp.ci_size & 127, w->ci))
		return 1;
	func = *(__u64 *)&out->frame[w->lp.ci_func & 120];
	a = b = 0;
	/* The closure goes in the buffer's second half: the stack allows no variable offsets. */
	cl = &out->frame[128];
	if (func && !lua__read(tv, sizeof(tv), func)) {
		/* The tag's byte follows the 8-byte Value in every release. */
		tag = (__u8)tv[1];
		if (tag == w->lp.tag_lua && !lua__read(cl, 64, tv[0])) {
			bool is_c = w->lp.cl_isc != LUA_NO_FIELD && cl[w->lp.cl_isc & 63];

			if (is_c) {
				a = LUA_FRAME_C;
				b = *(__u64 *)&cl[w->lp.cl_cfunc & 56];
			} else {
				a = *(__u64 *)&cl[w->lp.cl_proto & 56];
				b = w->leaf_pc && !i
					? w->leaf_pc
					: *(__u64 *)&out->frame[w->lp.ci_savedpc & 120];
			}
		} else if (tag == w->lp.tag_light && w->lp.tag_light) {
			a = LUA_FRAME_C;
			b = tv[0];
		} else if (tag == w->lp.tag_cclosure && w->lp.tag_cclosure &&
			   !lua__read(cl, 64, tv[0])) {
			a = LUA_FRAME_C;
			b = *(__u64 *)&cl[w->lp.cl_cfunc & 56];
		}
	}
	if (a) {
		out->words[n++] = a;
		out->words[n++] = b;
		out->n = n;
	}
	if (w->lp.flags & LUA_PROC_CI_ARRAY)
		w->ci -= w->lp.ci_size;
	else
		w->ci = *(__u64 *)&out->frame[w->lp.ci_previous & 120];
	return 0;
}

/*
 * Looking for the running state among candidate words in the output buffer (not written yet):
 * the registers, the thread's last state, words of its stack. One callback for all, so that
 * the state's check is verified once.
 */

static long lua__find_step(__u64 i, void *arg)
{
	struct lua__walk *f = arg;
	struct python__out *out;
	__u32 zero = 0;
	__u64 v, idx = f->first + i;

	out = bpf_map_lookup_elem(&python_frames, &zero);
	if (!out || idx >= LUA_SCAN_WORDS)
		return 1;
	v = out->words[idx];
	/* A heap object's address (a state is 8-aligned: LUA_EXTRASPACE bytes precede it), not
	 * one in the stack (saved frame pointers, locals' addresses). */
	if (v < 0x10000 || (v & 7) || v >= (1ULL << 47) ||
	    (v + (1ULL << 20) >= f->sp && v < f->sp + (8ULL << 20)))
		return 0;
	if (++f->peeks > LUA_SCAN_PEEKS)
		return 1;
	/* A short read first: the header's tag. */
	if (lua__read(out->frame, 16, v) || out->frame[f->lp.tag_off & 15] != f->lp.tag_thread)
		return 0;
	if (++f->tries > LUA_SCAN_TRIES)
		return 1;
	if (lua__is_state(&f->lp, v, out->frame)) {
		f->L = v;
		f->at = (__u8)idx;
		return 1;
	}
	return 0;
}

/* Whether one of words [first, first + n) of out is a state: its address in f->L, its first
 * bytes in out->frame. */
static __always_inline bool lua__find(struct lua__walk *f, __u32 first, __u32 n)
{
	f->first = first;
	f->peeks = f->tries = 0;
	f->L = 0;
	bpf_loop(n, lua__find_step, f, 0);
	return f->L != 0;
}

/* The walk from the current call of the state whose first bytes are in state. */
static __always_inline void lua__start(struct lua__walk *w, const __u8 *state)
{
	w->ci = lua__word(state, w->lp.l_ci);
	w->base_ci = w->leaf_pc = 0;
	if (w->lp.flags & LUA_PROC_CI_ARRAY) {
		w->base_ci = lua__word(state, w->lp.l_base_ci);
		if (w->lp.l_savedpc != LUA_NO_FIELD)
			w->leaf_pc = lua__word(state, w->lp.l_savedpc);
	}
}

/* --- LuaJIT 2.1 ------------------------------------------------------------------------- */

/*
 * LuaJIT keeps no CallInfo records: each frame sits on the Lua stack under its base, two
 * words (GC64 builds): the function (tagged, the low 47 bits its address), then the frame's
 * link. A link whose low 2 bits are 0 is the caller's return pc (the caller's base is below by
 * the CALL's A operand and two slots); else its low 3 bits say how it was entered (C: by
 * lua_call; CP: by lua_pcall, lua_cpcall or a coroutine's resume; PCALL, VARG, CONT) and the
 * rest is the distance down to the caller's base. A frame entered from C ends a run of Lua
 * calls: a (LUA_FRAME_C, return address) pair follows it, as a C function's does in PUC's
 * walk, the address where that VM entry returns to its C caller (from the chain of C frames
 * that L->cframe starts), so user space places the run right above that native frame
 * (src/runtime/lua.c).
 */
#define LJ_GCMASK      ((1ULL << 47) - 1)
#define LJ_FRAME_TYPE  3
#define LJ_FRAME_TYPEP 7
#define LJ_FRAME_LUA   0
#define LJ_FRAME_C     1
#define LJ_FRAME_VARG  3
#define LJ_FRAME_CP    5
#define LJ_GCT_FUNC    8 /* ~LJ_TFUNC */
#define LJ_VMST_INTERP (-1)

/* Moves the walk to the resumer of the coroutine at whose bottom it is: 0, or -1 if none. */
static __always_inline int lj__resumer(struct lua__walk *w, struct python__out *out)
{
	__u64 raw = w->cframe & LJ_CFRAME_RAWMASK, L = 0, base, v = 0, n = out->n;
	__u8 *st = out->frame;

	if (!(w->cframe & LJ_CFRAME_RESUME) || w->hops >= LJ_MAX_RESUMERS)
		return -1;
	/* lua__is_state's first checks: the whole of it does not fit the off-CPU program's
	 * stack here (combined 528 of 512 bytes); the cframe's match is the stronger test. */
	if (lua__read(&L, sizeof(L), raw + LJ_CFRAME_SIZE + LJ_CFRAME_OFS_L) || L < 4096 ||
	    (L & 7) || L >= (1ULL << 47) || lua__read(st, 96, L))
		return -1;
	if (st[w->lp.tag_off & 15] != w->lp.tag_thread ||
	    (lua__word(st, w->lp.l_cframe) & LJ_CFRAME_RAWMASK) != raw + LJ_CFRAME_SIZE)
		return -1;
	/* The resumer is in coroutine.resume, whose base resume moves up a slot (the resumed
	 * thread stays on the stack for the collector); a wrap's does not. */
	base = lua__word(st, w->lp.l_ci);
	if (lua__read(&v, sizeof(v), base - 16))
		return -1;
	if ((v >> 47) != LJ_TAG_FUNC) {
		base -= 8;
		if (lua__read(&v, sizeof(v), base - 16) || (v >> 47) != LJ_TAG_FUNC)
			return -1;
	}
	/* One run of Lua calls: no C-to-Lua entry lies between the two on the C stack. */
	if (n > 2 && n <= PYTHON_MAX_ENTRIES * 2 && out->words[n - 2] == LUA_FRAME_C)
		out->n = n - 2;
	w->L = L;
	w->ci = base;
	w->base_ci = lua__word(st, w->lp.l_stack);
	w->cframe = lua__word(st, w->lp.l_cframe);
	w->leaf_pc = 0;
	w->skip = 0;
	w->hops++;
	return 0;
}

static long lj__step(__u64 i, void *arg)
{
	struct lua__walk *w = arg;
	struct python__out *out;
	__u64 base = w->ci, link, fn, a = 0, b = 0, n, prev;
	__u32 zero = 0, ins;
	__u8 *cl;

	out = bpf_map_lookup_elem(&python_frames, &zero);
	if (!out)
		return 1;
	n = out->n;
	/* The bottom: stack[0] holds the thread, stack[1] nil, the first frame's base is 2;
	 * a coroutine's calls go on in its resumer's. */
	if (base <= w->base_ci + 16) {
		if (!lj__resumer(w, out))
			return 0;
		w->bottom = 1;
		return 1;
	}
	if (n >= LUA_MAX_ENTRIES * 2 || n >= PYTHON_MAX_ENTRIES * 2 - 4)
		return 1;
	if (lua__read(out->frame, 16, base - 16))
		return 1;
	fn = *(__u64 *)&out->frame[0] & LJ_GCMASK;
	link = *(__u64 *)&out->frame[8];
	cl = &out->frame[64];
	/* A dummy frame holds the thread; a vararg call's first frame repeats the function. */
	if (fn != w->L && !w->skip && !lua__read(cl, 48, fn) && cl[9] == LJ_GCT_FUNC) {
		if (!cl[w->lp.cl_isc & 47]) {
			a = *(__u64 *)&cl[w->lp.cl_proto & 40] - w->lp.proto_size;
			b = w->leaf_pc;
		}
	}
	w->skip = 0;
	if (a) {
		out->words[n++] = a;
		out->words[n++] = b;
	}
	if ((link & LJ_FRAME_TYPEP) == LJ_FRAME_CP || (link & LJ_FRAME_TYPE) == LJ_FRAME_C) {
		__u64 raw = w->cframe & LJ_CFRAME_RAWMASK;

		/* The C frame of the VM entry that ran this frame, innermost first: where it
		 * returns (its C caller, which user space finds among the native frames), then
		 * the entry before it. A resume's is kept for its resumer (lj__resumer). */
		out->words[n] = LUA_FRAME_C;
		out->words[n + 1] = 0;
		if (raw) {
			lua__read(&out->words[n + 1], sizeof(__u64), raw + LJ_CFRAME_SIZE - 8);
			if (!(w->cframe & LJ_CFRAME_RESUME) &&
			    lua__read(&w->cframe, sizeof(w->cframe), raw + LJ_CFRAME_OFS_PREV))
				w->cframe = 0;
		}
		n += 2;
	}
	out->n = n;
	if ((link & LJ_FRAME_TYPE) == LJ_FRAME_LUA) {
		/* The CALL before the return pc: its A operand is the callee's slot. */
		if (lua__read(&out->frame[56], 4, link - 4))
			return 1;
		ins = *(__u32 *)&out->frame[56];
		prev = base - 8 * (2 + ((ins >> 8) & 0xff));
		w->leaf_pc = link;
	} else {
		if ((link & LJ_FRAME_TYPE) == LJ_FRAME_VARG)
			w->skip = 1;
		prev = base - (link & ~(__u64)LJ_FRAME_TYPEP);
		w->leaf_pc = 0; /* the caller's pc is in the frame below, if Lua */
	}
	if (prev >= base)
		return 1;
	w->ci = prev;
	return 0;
}

/*
 * The C frame the running state's VM entered Lua from (its cframe: lj_vm_pcall's, _call's,
 * _cpcall's or _resume's, one layout) is where the native walk is to start when the sample
 * struck trace code, which has no unwind info and keeps no frame pointer (any_leaf 0: the
 * unwinder checks the leaf is in no file), or a helper of the interpreter (any_leaf 1): that
 * frame's caller (pc, stack pointer past the return address, saved rbp).
 */
static __always_inline void lj__exit(const struct lua_proc_entry *lp, __u64 cframe, __u64 any_leaf)
{
	struct unwind_jit_exit *x = unwind__jit_slot();
	__u64 raw = cframe & LJ_CFRAME_RAWMASK;

	/* Read straight into the slot: the BPF stack has no room to spare here. */
	if (!x || !raw || lua__read(&x->bp, sizeof(x->bp), raw + LJ_CFRAME_SIZE - 16) ||
	    lua__read(&x->pc, sizeof(x->pc), raw + LJ_CFRAME_SIZE - 8))
		return;
	x->any_leaf = any_leaf;
	x->lo = lp->text_lo;
	x->hi = lp->text_hi;
	x->sp = raw + LJ_CFRAME_SIZE;
}

/*
 * Where the running code's frames start: the base the interpreter holds in rdx if the sample
 * is in it (a function's frame is under it; the leaf's line from rbx, the next instruction,
 * if in its bytecode), the base of the frame a trace runs in, or L->base (up to date whenever
 * C code runs). out->frame holds L's first bytes; out->frame[128...] is scratch; lp is the
 * process's lua_procs entry (where its runtime's code is, for lj__exit).
 */
static __always_inline void lj__start(struct lua__walk *w, const struct lua_proc_entry *lp,
				      struct python__out *out)
{
	__u64 g = lua__word(out->frame, w->lp.l_g), jit_base = 0, fn, bc;
	__u64 rbx = out->words[LUA_WORD_RBX], rdx = out->words[LUA_WORD_RDX];
	__u8 *scratch = &out->frame[128];
	__s32 vmstate = 0;
	__u32 sizebc;

	w->ci = lua__word(out->frame, w->lp.l_ci);
	w->base_ci = lua__word(out->frame, w->lp.l_stack);
	w->cframe = lua__word(out->frame, w->lp.l_cframe);
	w->leaf_pc = 0;
	w->skip = 0;
	if (lua__read(&vmstate, sizeof(vmstate), g + w->lp.g_vmstate))
		return;
	/* The interpreter runs with its stack pointer at its C frame: 8 below, it has called a
	 * helper of its own that pushes nothing, which its unwind rows take for itself. */
	if (vmstate == LJ_VMST_INTERP && w->sp + 8 == (w->cframe & LJ_CFRAME_RAWMASK))
		lj__exit(lp, w->cframe, 1);
	if (vmstate >= 0) {
		lj__exit(lp, w->cframe, 0);
		if (!lua__read(&jit_base, sizeof(jit_base), g + w->lp.g_jit_base) && jit_base)
			w->ci = jit_base;
		return;
	}
	/*
	 * Code outside the interpreter's loop (a helper it called: its concatenation, the
	 * allocator under it; vmstate may still say interpreter): L->base is where the VM left
	 * it, and the pc it saved in its C frame before the call (SAVE_PC, as lj_debug reads it)
	 * is the line of the frame there, unless that frame's link gives it (a C function's).
	 * A pc outside the function's code is named by its first line in user space.
	 */
	if (w->cframe & LJ_CFRAME_RAWMASK)
		lua__read(&w->leaf_pc, sizeof(w->leaf_pc),
			  (w->cframe & LJ_CFRAME_RAWMASK) + LJ_CFRAME_OFS_PC);
	if (vmstate != LJ_VMST_INTERP || rdx <= w->base_ci + 16 || (rdx & 7) ||
	    rdx > lua__word(out->frame, w->lp.l_stack_last) + 64 * 8)
		return;
	if (lua__read(scratch, 8, rdx - 16))
		return;
	fn = *(__u64 *)scratch & LJ_GCMASK;
	if (lua__read(scratch, 48, fn) || scratch[9] != LJ_GCT_FUNC)
		return;
	/* rdx is the VM's base: L->base may be stale by every Lua call since C last ran, and
	 * its saved pc with it. */
	w->ci = rdx;
	w->leaf_pc = 0;
	if (scratch[w->lp.cl_isc & 47])
		return; /* a fast function in the VM's own code: its callers follow */
	bc = *(__u64 *)&scratch[w->lp.cl_proto & 40];
	if (!lua__read(&sizebc, sizeof(sizebc), bc - w->lp.proto_size + 12) && rbx > bc &&
	    rbx <= bc + 4 * (__u64)sizebc)
		w->leaf_pc = rbx;
}

/* Whether pid runs LuaJIT (its walk goes before the native one: bpf/unwind_jit.bpf.h). */
static __always_inline bool lua__jit_proc(__u32 pid)
{
	struct lua_proc_entry *lp = bpf_map_lookup_elem(&lua_procs, &pid);

	return lp && (lp->lp.flags & LUA_PROC_LUAJIT);
}

/*
 * Walks the current thread's Lua frames into python_frames, its user registers written there
 * (LUA_REGS_FROM) and sp its stack pointer: returns the pairs written, the leading
 * (LUA_FRAMES_MAGIC, version) one included (0: not a Lua process, or no state found).
 */
static __always_inline __u32 lua__walk(__u32 pid, __u64 sp)
{
	struct lua__walk w = {};
	struct python__out *out;
	struct lua_proc_entry *lp;
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	__u64 L, g, main = 0, *cached, n;

	lp = bpf_map_lookup_elem(&lua_procs, &pid);
	if (!lp)
		return 0;
	out = bpf_map_lookup_elem(&python_frames, &zero);
	if (!out)
		return 0;
	__builtin_memcpy(&w.lp, &lp->lp, sizeof(w.lp));
	w.sp = sp;
	/* Kept past the stack words a search may read (the BPF stack has no room for them). */
	out->words[LUA_WORD_RBX] = out->words[4];
	out->words[LUA_WORD_RDX] = out->words[8];
	cached = bpf_map_lookup_elem(&lua_threads, &tid);
	out->words[LUA_NR_REGS] = cached ? *cached : 0;
	/* The registers, then the last state found: that one only while still running (a
	 * suspended coroutine, status LUA_YIELD, is not). One pass: each call site of a bpf_loop
	 * callback is verified again, and the on-CPU program is near the verifier's limit. */
	if (lua__find(&w, 0, LUA_NR_REGS + 1) &&
	    (w.at < LUA_NR_REGS || !out->frame[w.lp.l_status & 127])) {
		L = w.L;
		if (w.at < LUA_NR_REGS && (!cached || *cached != L))
			bpf_map_update_elem(&lua_threads, &tid, &L, BPF_ANY);
	} else {
		if (!sp || lua__read(out->words, LUA_SCAN_WORDS * sizeof(__u64), sp) ||
		    !lua__find(&w, 0, LUA_SCAN_WORDS))
			return 0;
		L = w.L;
		bpf_map_update_elem(&lua_threads, &tid, &L, BPF_ANY);
	}
	g = lua__word(out->frame, w.lp.l_g);
	if (w.lp.flags & LUA_PROC_LUAJIT) {
		__u64 cur = 0;

		/* The coroutine running now, if not the state found: the one the interpreter's
		 * registers and the trace's base belong to. */
		if (!lua__read(&cur, sizeof(cur), g + w.lp.g_cur_l) && cur && cur != L) {
			out->words[LUA_NR_REGS + 1] = cur;
			if (lua__find(&w, LUA_NR_REGS + 1, 1))
				L = w.L;
			else if (lua__read(out->frame, 128, L))
				return 0;
		}
		w.L = L;
		lj__start(&w, lp, out);
		out->words[0] = LUA_FRAMES_MAGIC;
		out->words[1] = w.lp.version;
		out->n = 2;
		bpf_loop(LUA_MAX_ENTRIES, lj__step, &w, 0);
		n = out->n;
		/* Short of the bottom: user space must not take the last run for the whole. */
		if (!w.bottom && n > 2 && n < PYTHON_MAX_ENTRIES * 2 - 2) {
			out->words[n] = LUA_FRAME_CUT;
			out->words[n + 1] = 0;
			out->n = n + 2;
		}
		return out->n > 2 ? out->n / 2 : 0;
	}
	lua__start(&w, out->frame);
	out->words[0] = LUA_FRAMES_MAGIC;
	out->words[1] = w.lp.version;
	out->n = 2;
	bpf_loop(LUA_MAX_ENTRIES, lua__step, &w, 0);
	/*
	 * A coroutine's calls end where it was resumed: the main thread's go on from there (its
	 * leaf is the C function coroutine.resume or wrap, or the C function that resumed it).
	 * Coroutines resumed by coroutines between the two are not known: their frames are left
	 * out, in order.
	 */
	if (w.lp.g_mainthread != LUA_NO_FIELD &&
	    !lua__read(&main, sizeof(main), g + w.lp.g_mainthread) && main && main != L &&
	    out->n < LUA_MAX_ENTRIES * 2) {
		n = out->n;

		out->words[n] = main; /* a candidate past the words written */
		if (!lua__find(&w, n, 1))
			return n > 2 ? n / 2 : 0;
		lua__start(&w, out->frame);
		bpf_loop(LUA_MAX_ENTRIES, lua__step, &w, 0);
	}
	return out->n > 2 ? out->n / 2 : 0;
}

#endif
