/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_LUA_ABI_H
#define AUTOPROF_BPF_LUA_ABI_H

/*
 * Shared between bpf/lua.bpf.h and src/runtime/lua.c: __u8/__u16/__u32/__u64 only, no libc.
 * One value per Lua process in lua_procs: the offsets of the interpreter's structures in its
 * release (PUC 5.1, 5.3, 5.4: enough to walk a lua_State's CallInfo chain; LuaJIT 2.1: its
 * frames on the Lua stack).
 */

/* CallInfo records looked at per sample (leaf first); deeper chains lose their outer frames. */
#define LUA_MAX_ENTRIES 64
/* Offset that a release does not have. */
#define LUA_NO_FIELD 0xffff

/*
 * A sample's Lua frames take the interpreter-frame slot that Python's use (bpf/python_abi.h),
 * two words each, leaf first, after a first pair (LUA_FRAMES_MAGIC, version) that tells them
 * from Python's (a code object's address is never that). Then per CallInfo: a Lua function is
 * (its Proto's address, its saved pc); a C function is (LUA_FRAME_C, its address). A
 * coroutine's calls go on with its resumer's, leaf first: LuaJIT's when coroutine.resume (or a
 * wrap) ran it, each such resumer found; PUC's, the main thread's.
 */
#define LUA_FRAMES_MAGIC 0xffff4c7561000000ULL
#define LUA_FRAME_C	 1ULL
/* Last, (LUA_FRAME_CUT, 0): the walk stopped short of the stack's bottom (LuaJIT: a frame
 * that could not be read or linked, as when a sample falls while the VM sets one up). */
#define LUA_FRAME_CUT 2ULL

/* The version of LuaJIT 2.1 (x86-64, GC64 builds: the default since 2020) in lua_proc. */
#define LUA_VERSION_LUAJIT 0x0201

/*
 * A coroutine run by coroutine.resume or a wrap: the fast function calls lj_vm_resume, whose C
 * frame the coroutine's L->cframe points at with bit 0 (CFRAME_RESUME) set. That frame is
 * x86-64's vm_resume one, built with unwind tables (4 pushes and 40 bytes under the return
 * address): 80 bytes above it starts the C frame of the interpreter that called it, running
 * the resumer, whose lua_State that frame keeps 16 bytes in (SAVE_L), and whose own L->cframe
 * is that very address. That last fact is the check: lua_resume called from C code (nginx's)
 * has no such frame there, and its coroutine's calls end at the C marker. Nested coroutines
 * are followed up to LJ_MAX_RESUMERS.
 */
#define LJ_TAG_FUNC	   0x1fff7 /* a function's TValue >> 47 (~LJ_TFUNC's low 17 bits) */
#define LJ_CFRAME_RESUME   1ULL
#define LJ_CFRAME_RAWMASK  (~3ULL)
#define LJ_CFRAME_SIZE	   80
#define LJ_CFRAME_OFS_L	   16
#define LJ_CFRAME_OFS_PC   24 /* SAVE_PC: the pc the VM saved before calling out */
#define LJ_CFRAME_OFS_PREV 32 /* SAVE_CFRAME: the C frame entered before (0: a resume's) */
#define LJ_MAX_RESUMERS	   4

enum lua_proc_flags {
	LUA_PROC_CI_ARRAY = 1 << 0, /* 5.1: CallInfo records are an array from base_ci to ci */
	LUA_PROC_LUAJIT = 1 << 1,   /* frames on the Lua stack, linked by their frame words */
};

struct lua_proc {
	__u16 version; /* 0x0504 for 5.4 */
	__u16 flags;   /* enum lua_proc_flags */
	/* lua_State */
	__u16 l_status;	    /* lu_byte status: 0 while it runs or may run */
	__u16 l_top;	    /* StkId top */
	__u16 l_g;	    /* global_State *l_G */
	__u16 l_ci;	    /* CallInfo *ci */
	__u16 l_stack_last; /* StkId stack_last */
	__u16 l_stack;	    /* StkId stack */
	__u16 l_base_ci;    /* 5.1: CallInfo *base_ci; later: where the CallInfo base_ci is */
	__u16 l_savedpc;    /* 5.1: the running function's pc; else LUA_NO_FIELD */
	__u16 g_mainthread; /* global_State.mainthread */
	/* CallInfo */
	__u16 ci_func;	   /* StkId func */
	__u16 ci_previous; /* CallInfo *previous (LUA_NO_FIELD with LUA_PROC_CI_ARRAY) */
	__u16 ci_savedpc;  /* const Instruction *savedpc of a Lua function */
	__u16 ci_size;	   /* bytes of a CallInfo, < 128 */
	/* Closures (a TValue's tag is the byte after its 8-byte Value in every release) */
	__u16 cl_isc;	   /* 5.1: the closure's isC byte; else LUA_NO_FIELD */
	__u16 cl_proto;	   /* LClosure.p */
	__u16 cl_cfunc;	   /* CClosure.f */
	__u8 tag_lua;	   /* tag of a Lua closure (5.1: of any function, cl_isc tells) */
	__u8 tag_cclosure; /* tag of a C closure (5.1: unused) */
	__u8 tag_light;	   /* tag of a light C function (5.1: unused) */
	/* A lua_State's header: the byte that tells its type, and a thread's value there. */
	__u8 tag_off, tag_thread;
	__u8 pad;
	/* LuaJIT (LUA_PROC_LUAJIT): l_ci is L->base, l_stack_last L->maxstack; a function's
	 * ffid (0: Lua) is at cl_isc, its bytecode at cl_proto, a C function's address at
	 * cl_cfunc; global_State's vmstate (~state, or the number of the trace running), cur_L
	 * (the running coroutine) and jit_base (the base of the frame a trace runs in). */
	__u16 g_vmstate, g_cur_l, g_jit_base;
	__u16 proto_size; /* sizeof(GCproto): the bytecode follows it */
	__u16
	    l_cframe; /* LuaJIT: void *cframe, the C frame the state runs in (flags in bits 0-1) */
};

/*
 * lua_procs' value: the release's offsets, and where the runtime's code is mapped in the
 * process (LuaJIT: a sample there while a trace runs is in a helper the trace called, whose
 * walk would lead into the trace: bpf/unwind_jit.bpf.h). Only lp is copied for the walk.
 */
struct lua_proc_entry {
	struct lua_proc lp;
	__u64 text_lo, text_hi;
};

#endif
