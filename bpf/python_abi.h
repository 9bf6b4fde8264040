/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_PYTHON_ABI_H
#define AUTOPROF_BPF_PYTHON_ABI_H

/*
 * Shared between bpf/python.bpf.h and src/runtime/python.c: __u16/__u32/__u64 only, no libc.
 * One value per CPython process in python_procs: where its runtime is and the offsets of the
 * interpreter's structures in its version, enough to find the sampled thread's frame chain.
 */

/* Python frames a sample carries (entry pairs, group markers included). */
#define PYTHON_MAX_ENTRIES 96
/* Thread states looked at to find the sampled thread's (newest thread first); found, it is
 * remembered per thread. */
#define PYTHON_MAX_THREADS 128
/* Offset that a version does not have. */
#define PYTHON_NO_FIELD 0xffff

enum python_frame_kind {
	PYTHON_FRAME_OBJECT = 0, /* 3.10: PyFrameObject, f_lasti an int (code units) */
	PYTHON_FRAME_INTERP = 1, /* 3.11+: _PyInterpreterFrame, an instruction pointer */
};

/* _PyInterpreterFrame.owner of the shim frame each evaluation loop call pushes (3.12+). */
#define PYTHON_OWNED_BY_CSTACK 3

struct python_proc {
	__u64 runtime;		    /* address of _PyRuntime in the process */
	__u32 version;		    /* 0x030b for 3.11 */
	__u16 frame_kind;	    /* enum python_frame_kind */
	__u16 runtime_interp_head;  /* _PyRuntimeState.interpreters.head */
	__u16 interp_tstate_head;   /* PyInterpreterState.tstate_head / threads.head */
	__u16 tstate_next;	    /* PyThreadState.next */
	__u16 tstate_thread_id;	    /* PyThreadState.thread_id: pthread_self() */
	__u16 tstate_frame;	    /* .frame (3.10), .cframe (3.11, 3.12), .current_frame */
	__u16 cframe_current_frame; /* _PyCFrame.current_frame, or PYTHON_NO_FIELD */
	__u16 frame_previous;	    /* f_back / previous */
	__u16 frame_code;	    /* f_code / f_executable */
	__u16 frame_instr;	    /* f_lasti / prev_instr / instr_ptr */
	__u16 frame_owner;	    /* owner (3.12+ marks the evaluation loop's shim frame) */
	__u16 frame_is_entry;	    /* is_entry (3.11), or PYTHON_NO_FIELD */
	__u16 frame_size;	    /* bytes read per frame: up to its last field's end, < 128 */
	__u16 pad[2];
};

/*
 * A sample's Python frames follow its native ones in stack[], leaf first, two words each: the
 * code object's address and where it was (f_lasti in 3.10, the instruction pointer in 3.11+).
 * A pair with code 0 ends the frames one call of the evaluation loop ran: user space replaces
 * each _PyEval_EvalFrameDefault native frame with one such group.
 */

#endif
