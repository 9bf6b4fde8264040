/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UNWIND_CFI_H
#define AUTOPROF_UNWIND_CFI_H

/*
 * The unwind rows (bpf/unwind_abi.h) of one ELF file, built from its .eh_frame (or .debug_frame)
 * call frame information, x86-64 only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpf/unwind_abi.h"

/* A rule as the parsers make it (enum unwind_cfa_type, enum unwind_rbp_type), before
 * cfi_builder__finish packs it into a row. */
struct unwind_rule {
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t cfa_type;
	uint8_t rbp_type;
};

/* r as a row's rule word; one a row cannot hold is UNWIND_CFA_INVALID (the walk ends there). */
static inline uint32_t unwind_rule__pack(const struct unwind_rule *r)
{
	bool cfa_off = r->cfa_type == UNWIND_CFA_RSP || r->cfa_type == UNWIND_CFA_RBP ||
		       r->cfa_type == UNWIND_CFA_PLT || r->cfa_type == UNWIND_CFA_RBP_SWITCH;
	bool rbp_off = r->rbp_type == UNWIND_RBP_OFFSET;

	bool fits = (!cfa_off || (r->cfa_off <= UNWIND_ROW_CFA_OFF_MAX &&
				  r->cfa_off >= -UNWIND_ROW_CFA_OFF_MAX)) &&
		    (!rbp_off || (r->rbp_off % 8 == 0 && r->rbp_off <= UNWIND_ROW_RBP_OFF_MAX &&
				  r->rbp_off >= -UNWIND_ROW_RBP_OFF_MAX));

	if (!fits)
		return UNWIND_ROW_RULE(UNWIND_CFA_INVALID, 0, UNWIND_RBP_INVALID, 0);
	return UNWIND_ROW_RULE(r->cfa_type, cfa_off ? r->cfa_off : 0, r->rbp_type,
			       rbp_off ? r->rbp_off : 0);
}

static inline struct unwind_rule unwind_row__rule(const struct unwind_row *row)
{
	return (struct unwind_rule){
		.cfa_off = UNWIND_ROW_CFA_OFF(row->rule),
		.rbp_off = (int16_t)UNWIND_ROW_RBP_OFF(row->rule),
		.cfa_type = (uint8_t)UNWIND_ROW_CFA_TYPE(row->rule),
		.rbp_type = (uint8_t)UNWIND_ROW_RBP_TYPE(row->rule),
	};
}

struct cfi_table {
	struct unwind_row *rows; /* sorted by pc, owned by the table */
	uint32_t nr;
	uint32_t flags; /* enum unwind_file_flags */
};

/*
 * Builds the unwind rows of the ELF file open at fd (fd stays the caller's; its file offset is
 * not used), from .eh_frame/.debug_frame and, for Go code, .gopclntab. Returns 0 -- a file
 * with no usable unwind info (no CFI, not x86-64) gives nr == 0 and flags UNWIND_FILE_FP -- or a negative errno: -ENOEXEC (not an ELF file), -ENOMEM.
 */
int cfi__build(int fd, struct cfi_table *out);
/* Accepts a zeroed table; leaves it zeroed. */
void cfi_table__release(struct cfi_table *t);

/*
 * Lower level, for the fuzzer and tests: a builder collects the rows of CFI sections in ELF
 * virtual addresses, then turns them into file-offset rows through the executable segments.
 *
 *   b = cfi_builder__new();
 *   cfi_builder__add_segment(b, p_vaddr, p_filesz, p_offset);   (each executable PT_LOAD)
 *   cfi__parse_section(b, data, size, sh_addr, false);            (.eh_frame)
 *   cfi_builder__finish(b, &table);
 *   cfi_builder__free(b);
 */
struct cfi_builder;

struct cfi_builder *cfi_builder__new(void);
void cfi_builder__free(struct cfi_builder *b);
/* An executable PT_LOAD: [vaddr, vaddr + size) is at [offset, offset + size) in the file. */
int cfi_builder__add_segment(struct cfi_builder *b, uint64_t vaddr, uint64_t size,
			     uint64_t offset);
/* The base of DW_EH_PE_datarel pointers in .eh_frame (the .got address); none by default. */
void cfi_builder__set_data_base(struct cfi_builder *b, uint64_t data_base);

/*
 * Parses one CFI section image whose first byte is at section_vaddr: .eh_frame, or .debug_frame
 * with debug_frame (lower priority: its FDEs only cover code no .eh_frame FDE covers). Safe on
 * arbitrary bytes: malformed entries are skipped, never read past size. Returns the number of
 * FDEs that gave rows, or -ENOMEM.
 */
int cfi__parse_section(struct cfi_builder *b, const uint8_t *data, size_t size,
		       uint64_t section_vaddr, bool debug_frame);

/*
 * Rules for code with no CFI of its own, used only where no parsed FDE covers it: one rule for
 * [vaddr, vaddr + size), or the lazy PLT rules (first entry pushes, then threshold) for a .plt.
 */
int cfi_builder__add_synthetic(struct cfi_builder *b, uint64_t vaddr, uint64_t size,
			       const struct unwind_rule *rule);
int cfi_builder__add_lazy_plt(struct cfi_builder *b, uint64_t vaddr, uint64_t size,
			      uint32_t threshold);
/*
 * The rows of one function [start, end) from another source than CFI (Go's .gopclntab):
 * rows[i] holds from pc[i] (ascending, pc[0] == start) to the next. They rank below
 * .eh_frame's FDEs and above .debug_frame's. Returns 0 or -ENOMEM.
 */
int cfi_builder__add_rows(struct cfi_builder *b, uint64_t start, uint64_t end,
			  const uint64_t *pc, const struct unwind_rule *rows, size_t nr);

/*
 * Sorted, merged file-offset rows of everything added so far, with UNWIND_CFA_NONE rows closing
 * the gaps between FDEs. Returns 0 (nr may be 0) or -ENOMEM.
 */
int cfi_builder__finish(struct cfi_builder *b, struct cfi_table *out);

#endif
