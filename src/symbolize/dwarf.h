/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DWARF_H
#define AUTOPROF_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Source positions and inlined frames of one ELF file that has .debug_info (the binary itself or
 * its separate debug file), read with libdw. Addresses are ELF virtual addresses in the file's own
 * p_vaddr space. The answers follow what `addr2line -f -i` prints.
 *
 * A dwarf_info is not thread-safe: lookups fill lazy per-CU indexes and libdw's own caches, so
 * callers serialize the lookups (and releases) on one dwarf_info.
 */
struct dwarf_info;

#define DWARF_MAX_INLINE 8

/* Strings are owned by the dwarf_info and valid until dwarf_info__free. */
struct dwarf_line {
	const char *function;	/* DW_AT_linkage_name if present (mangled), else DW_AT_name;
				 * NULL when DWARF names no function there */
	const char *file;	/* source path as DWARF has it (comp_dir joined if relative);
				 * NULL when unknown */
	uint32_t line;		/* 0 if unknown */
};

/*
 * Innermost (deepest inlined callee, with the line of the address itself) first; each next entry
 * is the caller of the previous one at its call site; the real function last. Chains deeper than
 * DWARF_MAX_INLINE keep the innermost callees and the real function.
 */
struct dwarf_frame {
	uint32_t nr;
	struct dwarf_line lines[DWARF_MAX_INLINE];
};

/*
 * Lookups copy what they need of a compilation unit out of libdw, on the first lookup in it. A
 * file whose debug sections inflate to at most this is also copied whole, a step at each
 * dwarf_info__maintain, and libdw then let go for good: glibc's debug file (8.6 MiB of
 * sections) becomes 2.0 MiB of copies in ten steps of ~20 ms, and no later lookup inflates it
 * again. Bigger files are let go when idle.
 */
#define DWARF_WHOLE_MAX (16u << 20)

/* fd stays the caller's and must stay open until dwarf_info__free. whole_max: DWARF_WHOLE_MAX
 * (0: never whole). Returns 0, -ENODATA when the file has no .debug_info, -ENOEXEC when it is
 * not ELF, -ENOMEM. */
int dwarf_info__open(int fd, size_t whole_max, struct dwarf_info **out);
void dwarf_info__free(struct dwarf_info *di);	/* accepts NULL */

/* Returns 0 (out->nr >= 1) or -ENOENT when no compilation unit covers vaddr. */
int dwarf_info__lookup(struct dwarf_info *di, uint64_t vaddr, struct dwarf_frame *out);

/* Heap held by our indexes and (estimated) libdw's caches, for the cache budget. */
size_t dwarf_info__bytes(const struct dwarf_info *di);

/*
 * Called now and then (the symbolizer's sweep): a file copied whole copies its next step, and
 * lets libdw go (its inflated sections, its caches) once all is copied; another lets it go when
 * no CU was copied for idle_ns. The CUs copied keep answering, and a lookup in another one
 * opens libdw again (milliseconds: glibc's debug file is inflated anew). Returns the bytes let
 * go.
 */
size_t dwarf_info__maintain(struct dwarf_info *di, uint64_t idle_ns);
/* Whether a whole copy has steps left (dwarf_info__maintain). */
bool dwarf_info__copying(const struct dwarf_info *di);
/* How many times libdw was opened over the file for lookups (1 without a release; a whole
 * copy's batches are one). */
unsigned long long dwarf_info__opens(const struct dwarf_info *di);
/* How many times libdw was let go: after a whole copy, or idle. */
unsigned long long dwarf_info__lets_go(const struct dwarf_info *di);

#endif
