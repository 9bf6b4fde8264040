/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PRELOAD_H
#define AUTOPROF_PRELOAD_H

/*
 * What libautoprof_preload.so shares with autoprof: the record autoprof finds it by (in
 * .dynsym), the ring of sampled allocations and frees it writes, and the one marker autoprof
 * probes.
 *
 * Version 2: a sampled allocation or free costs the process no trap. The shim copies the
 * allocating thread's registers at the call and its stack from there up (up to stack_max
 * bytes) into the ring; autoprof drains it on its own CPU time, unwinds each copy with the
 * same tables BPF uses, and stores the sample. The ring is a sealed memfd (no shrinking or
 * growing) mapped shared: autoprof maps the same pages through /proc/PID/map_files. Records are
 * written only while autoprof says it reads them (consumer). When a writer takes the ring past
 * another quarter of its size it calls autoprof_preload_flush, whose uprobe wakes autoprof (one
 * trap per quarter ring).
 */
#include <stddef.h>
#include <stdint.h>

#define AUTOPROF_PRELOAD_VERSION 2

struct autoprof_preload {
	uint32_t version; /* AUTOPROF_PRELOAD_VERSION */
	uint32_t pad;
	uint64_t mean;	    /* mean sampling interval in bytes */
	uint64_t sampled;   /* allocations sampled */
	uint64_t live;	    /* of which not freed yet */
	uint64_t untracked; /* sampled, but no memory to remember them: not reported */
	/* version 2 */
	uint64_t ring;	    /* address of the struct autoprof_preload_ring, 0: none */
	uint64_t ring_size; /* bytes of its data[], a power of two */
	uint64_t stack_max; /* bytes of stack a record copies at most */
	uint64_t consumer;  /* written by autoprof: its pid while it drains the ring, else 0 */
	uint64_t dropped;   /* records lost to a full ring */
	uint64_t stack_cut; /* allocation records whose stack copy was cut at stack_max */
};
extern struct autoprof_preload autoprof_preload_v1;

/*
 * A multi-producer ring with positions counted in bytes from 0, never wrapped: a record at
 * position pos lies at data[pos % ring_size]. Writers reserve with a compare-and-swap on head
 * (never past tail + ring_size), fill the record, then store its commit word last (release).
 * autoprof reads [tail, head), stops at the first record not committed yet, and writes tail.
 */
struct autoprof_preload_ring {
	uint64_t head; /* bytes reserved by writers */
	uint64_t pad0[7];
	uint64_t tail; /* bytes autoprof has consumed: written by autoprof only */
	uint64_t pad1[7];
	uint64_t notified; /* head at the last flush call */
	uint64_t pad2[7];
	uint8_t data[]; /* ring_size bytes */
};

enum autoprof_preload_rec_type {
	AUTOPROF_REC_ALLOC = 1, /* a sampled allocation, with its stack */
	AUTOPROF_REC_FREE,	/* a sampled block is about to be freed (or moved by realloc) */
	AUTOPROF_REC_PAD,	/* nothing: fills the ring's end when a record did not fit there */
};

/* Records are multiples of this, so a gap at the ring's end always holds a header's start. */
#define AUTOPROF_REC_ALIGN 16

struct autoprof_preload_rec {
	uint64_t commit; /* the record's position + 1, stored last; anything else: not written */
	uint32_t type;	 /* enum autoprof_preload_rec_type */
	uint32_t len;	 /* bytes of the whole record, AUTOPROF_REC_ALIGN-aligned */
	uint64_t ptr;
	uint64_t size;	  /* ALLOC: bytes asked for */
	uint64_t mean;	  /* ALLOC: the interval it was drawn with */
	uint64_t time_ns; /* ALLOC: CLOCK_MONOTONIC */
	uint32_t tid;
	uint32_t stack_len; /* ALLOC: bytes of stack after this header */
	/* ALLOC: where the program called the allocator: the call's return address, the stack
	 * pointer after that return, the frame pointer then. The stack copy is of [sp, sp +
	 * stack_len). */
	uint64_t pc, sp, bp;
};

/* Woken by a writer every quarter ring; a nop and a ret unless probed. */
void autoprof_preload_flush(void);

#endif
