/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DWARF_PRIV_H
#define AUTOPROF_DWARF_PRIV_H
/*
 * Inside src/symbolize/dwarf.c (a file: libdw opened, let go, its CUs found) and dwarf_cu.c
 * (a compilation unit copied out of libdw, and answered from the copies).
 */
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/dwarf.h"

/* Deeper nesting than this (scopes in scopes, or namespaces in classes) is malformed DWARF; the
 * limit keeps a hostile file from exhausting the stack of our recursive walk. */
#define DWARF_MAX_DEPTH 64

/* libdw's caches are not visible to us: rough per-item costs to account for them. */
#define LIBDW_CU_BYTES	 192
#define LIBDW_LINE_BYTES 64
#define LIBDW_FILE_BYTES 48

/*
 * A code range and what it belongs to (index into a CU or function table). Sorted by lo;
 * max_hi is the highest hi of this and all earlier ranges, which bounds the backwards scan when
 * ranges nest or overlap.
 */
struct addr_range {
	uint64_t lo;
	uint64_t hi;
	uint64_t max_hi;
	size_t idx;
};

struct range_vec {
	struct addr_range *v;
	size_t nr;
	size_t cap;
};

/* An inlined subroutine of a function, in the function's DIE order (preorder). */
struct inl_node {
	int32_t parent;	    /* the enclosing inlined node, among the function's; -1: the function */
	uint32_t name;	    /* the callee's name (strtab index; 0: none) */
	uint32_t call_file; /* where the enclosing function calls it */
	uint32_t call_line;
	uint32_t first_range; /* into dwarf_cu.ranges */
	uint32_t nr_ranges;
};

struct func_ent {
	uint32_t name;
	uint32_t first_node; /* into dwarf_cu.nodes */
	uint32_t nr_nodes;
};

/* A row of the CU's line table, in libdw's order (by address), as decoded. */
struct line_row {
	uint32_t off;  /* its address less the CU's first row's (rows_base) */
	uint32_t file; /* strtab index; 0: none */
	uint32_t line : 31;
	uint32_t end_sequence : 1;
};

struct pc_range {
	uint64_t lo, hi;
};

/* Rows a block of the coded line table holds: a lookup decodes at most this many. */
#define LINE_BLOCK 32

/* Where a block of LINE_BLOCK rows starts: its first row's off, and its first byte. */
struct line_mark {
	uint32_t off;
	uint32_t pos;
};

/*
 * One compilation unit. What a lookup needs of it (every DW_TAG_subprogram with code, at any
 * depth, so namespaces, member functions and lambdas are covered; their inlined subroutines; the
 * line table) is copied out of libdw on the first lookup that lands in it, with the names
 * interned: most CUs of a big binary are never sampled, and libdw itself (the inflated sections:
 * 8.6 MiB of glibc's debug file) can then be let go while the copies keep answering.
 */
struct dwarf_cu {
	Dwarf_Off off; /* its DIE's offset: found again when libdw is opened again */
	bool indexed;
	struct range_vec funcs; /* idx into fns */
	struct func_ent *fns;
	uint32_t nr_fns, cap_fns;
	struct inl_node *nodes;
	uint32_t nr_nodes, cap_nodes;
	struct pc_range *ranges;
	uint32_t nr_ranges, cap_ranges;
	/* The line table, delta-coded (dwarf_cu.c, row_put), each block of LINE_BLOCK rows
	 * coded from its mark alone: 2-3 bytes a row (glibc's 180,000 rows took 12 each). */
	uint8_t *lines;
	size_t lines_len;
	struct line_mark *marks; /* one a block: (nr_rows + LINE_BLOCK - 1) / LINE_BLOCK */
	size_t nr_rows;
	uint64_t rows_base;
};

/* A relative source path joined with its CU's comp_dir, keyed by libdw's two strings (valid
 * while libdw is open: the memo is emptied when it is let go). */
struct path_slot {
	const char *name;
	const char *comp_dir;
	uint32_t joined; /* strtab index; 0: empty slot */
};

/* A chunk of the copies' own memory (dwarf_info__keep): its header, then what was kept. */
struct keep_chunk {
	struct keep_chunk *next;
	size_t size; /* mapped, header included */
};

struct dwarf_info {
	int fd;
	/* libdw's, while open: NULL once let go until a CU not yet copied needs it */
	Elf *elf;
	Dwarf *dw;
	size_t open_bytes;    /* what the open libdw holds (its sections, estimated caches) */
	uint64_t used_ns;     /* CLOCK_MONOTONIC of the last CU copied */
	struct dwarf_cu *cus; /* in .debug_info order, so sorted by DIE offset */
	size_t nr_cus;
	struct range_vec cu_ranges; /* idx into cus */
	struct range_vec ar_ranges; /* .debug_aranges's, for CUs their own ranges miss; idx too */
	struct strtab *strs;	    /* every name and path handed out: they outlive libdw */
	struct path_slot *paths;
	size_t paths_cap;
	size_t nr_paths;
	size_t bytes; /* ours, kept across a release */
	unsigned long long opens;
	unsigned long long lets_go; /* libdw let go: after a whole copy, or idle */
	bool whole;	/* copied whole, a step a dwarf_info__maintain, then let go for good */
	size_t next_cu; /* where the whole copy goes on */
	size_t rows_open; /* rows copied since libdw was begun: its line tables */
	struct keep_chunk *kept; /* newest first; freed whole with the dwarf_info */
	size_t kept_used;	 /* bytes of kept's newest chunk handed out */
};

/*
 * A copy of size bytes of src in memory of di's own, or NULL (size 0, or out of memory). Copies
 * are never freed one by one, and kept apart from the heap: glibc's, made amid libdw's short-
 * lived allocations, left 3 MB of heap pages half used once libdw was let go.
 */
void *dwarf_info__keep(struct dwarf_info *di, const void *src, size_t size);
int range_vec__add(struct range_vec *rv, uint64_t lo, uint64_t hi, size_t idx);
void range_vec__sort(struct range_vec *rv);
/* The latest-starting range containing addr, or NULL. O(log n) unless ranges overlap. */
const struct addr_range *range_vec__find(const struct range_vec *rv, uint64_t addr);
size_t range_vec__bytes(const struct range_vec *rv);
/* Adds every code range of die to rv. A DIE without code simply has none. */
int range_vec__add_die(struct range_vec *rv, Dwarf_Die *die, size_t idx);

/* Copies cu out of di's open libdw (dwarf_cu.c) into memory kept by di (dwarf_info__keep): a
 * unit is never freed before its dwarf_info. Marks it indexed whatever it found. */
void dwarf_cu__index(struct dwarf_info *di, struct dwarf_cu *cu);
/* Answers vaddr from cu's copies alone. */
void dwarf_cu__lookup(const struct dwarf_info *di, const struct dwarf_cu *cu, uint64_t vaddr,
		      struct dwarf_frame *out);
/* Empties the memo of joined paths, keyed by libdw's strings, before libdw goes. */
void dwarf_info__forget_paths(struct dwarf_info *di);

#endif
