/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UNWIND_CFI_PRIV_H
#define AUTOPROF_UNWIND_CFI_PRIV_H

/*
 * Between cfi.c (parsing .eh_frame / .debug_frame and ELF files) and cfi_builder.c (collecting
 * the parsed rows and ordering them into a table); gocfi.c adds Go's rows through cfi.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"

#define CFI_MAX_SEGS  16

/* FDE priorities: a lower one's FDEs hide every overlapping FDE of a higher one. */
enum { PRIO_EH_FRAME, PRIO_ROWS, PRIO_DEBUG_FRAME, PRIO_SYNTHETIC, PRIO__MAX };

/* A row in ELF virtual addresses, as parsed. */
struct cfi_vrow {
	uint64_t pc;
	struct unwind_rule r;
};

struct cfi_fde {
	uint64_t start, end; /* vaddr, then file offsets once mapped */
	int64_t delta;	     /* file offset - vaddr */
	uint32_t row, nr;    /* its rows in cfi_builder.vrows */
	uint32_t seq;	     /* order of addition: ties sort stably */
	uint8_t prio;
};

struct cfi_seg {
	uint64_t vaddr, size, offset;
};

struct cfi_builder {
	struct cfi_vrow *vrows;
	size_t nr_vrows, cap_vrows;
	struct cfi_fde *fdes;
	size_t nr_fdes, cap_fdes;
	struct cfi_seg segs[CFI_MAX_SEGS];
	unsigned int nr_segs;
	uint64_t data_base;
	bool has_data_base;
};

/* Grows *p (cap elements of elem bytes) to hold need; NULL when out of memory (p stays). */
void *cfi__grow(void *p, size_t *cap, size_t need, size_t elem);
/* An FDE's rows: open one (NULL when out of memory), add its rows in order, close it (ok:
 * keep its rows, else drop them). 0 or -ENOMEM. */
int cfi_builder__add_vrow(struct cfi_builder *b, uint64_t pc, const struct unwind_rule *r);
struct cfi_fde *cfi_builder__open_fde(struct cfi_builder *b, uint64_t start, uint64_t end,
					 uint8_t prio);
void cfi_builder__close_fde(struct cfi_builder *b, struct cfi_fde *f, bool ok);

/* Whether two rows give the same rules (a new row only where they change). */
static inline bool row_same(const struct unwind_rule *a, const struct unwind_rule *b)
{
	return a->cfa_type == b->cfa_type && a->cfa_off == b->cfa_off &&
	       a->rbp_type == b->rbp_type && a->rbp_off == b->rbp_off;
}

#endif
