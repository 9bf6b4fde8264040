/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_FUZZ_PRELOAD_H
#define AUTOPROF_FUZZ_PRELOAD_H

/*
 * The layout of fuzz/fuzz_preload.c's inputs, shared with the program that writes its seeds
 * (fuzz/gen_preload_corpus.c):
 *   struct fuzz_hdr | ring bytes | tab_len bytes: struct fuzz_tab, then its arrays
 * Little-endian, as on the machine that runs it.
 */
#include <stdint.h>

struct fuzz_hdr {
	uint64_t pos;	  /* ring position of the first ring byte (commit words name it + 1) */
	uint8_t max;	  /* pcs a walk has room for (at most 127) */
	uint8_t flags;	  /* enum fuzz_flags */
	uint16_t tab_len; /* bytes of tables at the input's end; fewer than a fuzz_tab: none */
	uint32_t head;	  /* FUZZ_DRAIN: the ring's head, pos + this (0: + the ring bytes) */
};

enum fuzz_flags {
	/* Also drained by preload_ring__drain, through /proc/self/mem: the ring bytes laid from
	 * pos on in a ring of the next power of two (at least 4096), wrapping at its end. */
	FUZZ_DRAIN = 1 << 0,
};

/*
 * Unwind tables for the walk: then nmaps struct unwind_mapping (the process's table, whose
 * count says proc_nr), nfiles struct unwind_file, npages __u32, nrows struct unwind_row
 * (packed here; the fuzzer spaces the files as the mapped array does, 8-byte aligned). The
 * page entries and rows are one space of 8-byte elements, as in BPF (bpf/unwind_abi.h): the
 * entries two to an element, then the rows, so row i is element (npages + 1) / 2 + i. Counts
 * past the bytes there are cut to what is there.
 */
struct fuzz_tab {
	uint32_t proc_nr;
	uint16_t nmaps;
	uint16_t nfiles;
	uint32_t npages;
	uint32_t nrows;
};

#endif
