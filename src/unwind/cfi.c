// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "cfi: " fmt

/*
 * .eh_frame / .debug_frame to unwind rows (DWARF 5 section 6.4, LSB "Exception Frames").
 *
 * One linear pass: each FDE's program runs once and emits a row whenever the location advances
 * and the rule BPF cares about (CFA, rbp, return address defined or not) changed. Only those
 * three columns are tracked, so a state is a few words and remember_state is a copy.
 * FDEs are then ordered by their file offset, not by their rows, which are in order within an
 * FDE already.
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "unwind/cfi.h"
#include "unwind/cfi_priv.h"
#include "unwind/gocfi.h"

#define DW_REG_RBP 6
#define DW_REG_RSP 7
#define DW_REG_RA  16

/* glibc and libstdc++ nest remember_state at most twice; deeper is malformed or hostile. */
#define CFI_STACK_MAX 16
/* Direct-mapped cache of parsed CIEs, keyed by offset: most files have a handful of CIEs. */
#define CIE_CACHE     64

enum {
	DW_CFA_advance_loc = 0x40,
	DW_CFA_offset = 0x80,
	DW_CFA_restore = 0xc0,
	DW_CFA_nop = 0x00,
	DW_CFA_set_loc = 0x01,
	DW_CFA_advance_loc1 = 0x02,
	DW_CFA_advance_loc2 = 0x03,
	DW_CFA_advance_loc4 = 0x04,
	DW_CFA_offset_extended = 0x05,
	DW_CFA_restore_extended = 0x06,
	DW_CFA_undefined = 0x07,
	DW_CFA_same_value = 0x08,
	DW_CFA_register = 0x09,
	DW_CFA_remember_state = 0x0a,
	DW_CFA_restore_state = 0x0b,
	DW_CFA_def_cfa = 0x0c,
	DW_CFA_def_cfa_register = 0x0d,
	DW_CFA_def_cfa_offset = 0x0e,
	DW_CFA_def_cfa_expression = 0x0f,
	DW_CFA_expression = 0x10,
	DW_CFA_offset_extended_sf = 0x11,
	DW_CFA_def_cfa_sf = 0x12,
	DW_CFA_def_cfa_offset_sf = 0x13,
	DW_CFA_val_offset = 0x14,
	DW_CFA_val_offset_sf = 0x15,
	DW_CFA_val_expression = 0x16,
	DW_CFA_MIPS_advance_loc8 = 0x1d,
	DW_CFA_GNU_window_save = 0x2d,
	DW_CFA_GNU_args_size = 0x2e,
	DW_CFA_GNU_negative_offset_extended = 0x2f,
};

enum {
	DW_EH_PE_absptr = 0x00,
	DW_EH_PE_uleb128 = 0x01,
	DW_EH_PE_udata2 = 0x02,
	DW_EH_PE_udata4 = 0x03,
	DW_EH_PE_udata8 = 0x04,
	DW_EH_PE_sleb128 = 0x09,
	DW_EH_PE_sdata2 = 0x0a,
	DW_EH_PE_sdata4 = 0x0b,
	DW_EH_PE_sdata8 = 0x0c,
	DW_EH_PE_pcrel = 0x10,
	DW_EH_PE_textrel = 0x20,
	DW_EH_PE_datarel = 0x30,
	DW_EH_PE_funcrel = 0x40,
	DW_EH_PE_aligned = 0x50,
	DW_EH_PE_indirect = 0x80,
	DW_EH_PE_omit = 0xff,
};

enum cfa_kind { CFA_REG, CFA_PLT, CFA_BAD };
enum reg_kind { RULE_UNDEF, RULE_SAME, RULE_OFFSET, RULE_OTHER };

/* The columns BPF uses, after some instructions. */
struct cfi_state {
	int64_t cfa_off;
	int64_t rbp_off;
	uint64_t cfa_reg;
	uint8_t cfa_kind;
	uint8_t rbp_kind;
	bool ra_undef;
};

struct cfi_cie {
	uint64_t off;
	int status; /* 0: parsed, < 0: unusable, 1: slot empty */
	const uint8_t *insns, *insns_end;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t addr_size;
	bool has_z;
	bool signal;
	struct cfi_state init;
};

/* A bounds-checked reader: a read past the end returns 0 and sets bad, which sticks. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

/* What pointer decoding needs besides the bytes. */
struct ptr_ctx {
	const uint8_t *sec;
	uint64_t sec_vaddr;
	uint64_t data_base;
	bool has_data_base;
	bool debug_frame;
};

struct cfi_section {
	struct cfi_builder *b;
	const uint8_t *data;
	size_t size;
	struct ptr_ctx ptr;
	struct cfi_cie cies[CIE_CACHE];
};

/* One FDE (or CIE initial instructions) program run. */
struct cfi_run {
	struct cfi_builder *b;
	const struct cfi_cie *cie;
	const struct ptr_ctx *ptr;
	const struct cfi_state *init;
	uint64_t loc, end;
	bool emit;
	bool have_last;
	struct unwind_rule last;
	struct cfi_state st;
	unsigned int depth;
	struct cfi_state stack[CFI_STACK_MAX];
};

static bool cur_has(struct cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return false;
	}
	return true;
}

static uint64_t cur_le(struct cur *c, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (!cur_has(c, n))
		return 0;
	for (i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint8_t cur_u8(struct cur *c)
{
	return cur_le(c, 1);
}

static uint64_t cur_uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (cur_has(c, 1)) {
		uint8_t byte = *c->p++;

		/* Bits past 64 are dropped: a value that big is garbage either way. */
		if (shift < 64)
			v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80))
			return v;
	}
	return 0;
}

static int64_t cur_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (cur_has(c, 1)) {
		uint8_t byte = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80)) {
			if (shift < 64 && (byte & 0x40))
				v |= ~0ull << shift;
			return (int64_t)v;
		}
	}
	return 0;
}

static void cur_skip(struct cur *c, uint64_t n)
{
	if (!c->bad && n > (uint64_t)(c->end - c->p))
		c->bad = true;
	if (!c->bad)
		c->p += n;
}

/*
 * Reads a DW_EH_PE-encoded pointer. With raw, the application part (pcrel...) and indirection
 * are ignored, for values only skipped or sizes (an FDE's address range). Returns false when
 * the encoding is one we cannot resolve.
 */
static bool read_ptr(struct cur *c, uint8_t enc, const struct ptr_ctx *ctx, uint8_t addr_size,
		     bool raw, uint64_t *out)
{
	uint64_t field = ctx->sec_vaddr + (uint64_t)(c->p - ctx->sec);
	uint64_t v;

	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		v = cur_le(c, addr_size);
		break;
	case DW_EH_PE_uleb128:
		v = cur_uleb(c);
		break;
	case DW_EH_PE_udata2:
		v = cur_le(c, 2);
		break;
	case DW_EH_PE_udata4:
		v = cur_le(c, 4);
		break;
	case DW_EH_PE_udata8:
		v = cur_le(c, 8);
		break;
	case DW_EH_PE_sleb128:
		v = cur_sleb(c);
		break;
	case DW_EH_PE_sdata2:
		v = (int64_t)(int16_t)cur_le(c, 2);
		break;
	case DW_EH_PE_sdata4:
		v = (int64_t)(int32_t)cur_le(c, 4);
		break;
	case DW_EH_PE_sdata8:
		v = cur_le(c, 8);
		break;
	default:
		c->bad = true;
		return false;
	}
	if (c->bad)
		return false;
	if (raw) {
		*out = v;
		return true;
	}
	if (enc & DW_EH_PE_indirect)
		return false;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += field;
		break;
	case DW_EH_PE_datarel:
		if (!ctx->has_data_base)
			return false;
		v += ctx->data_base;
		break;
	default:
		/* textrel, funcrel, aligned: never used for code addresses on x86-64. */
		return false;
	}
	*out = v;
	return true;
}

/* The row BPF follows for a state; fields it ignores are zero so equal rules compare equal. */
static struct unwind_rule state_row(const struct cfi_state *s)
{
	struct unwind_rule r = {};

	if (s->ra_undef) {
		r.cfa_type = UNWIND_CFA_UNDEFINED;
		return r;
	}
	switch (s->cfa_kind) {
	case CFA_REG:
		if (s->cfa_reg == DW_REG_RSP)
			r.cfa_type = UNWIND_CFA_RSP;
		else if (s->cfa_reg == DW_REG_RBP)
			r.cfa_type = UNWIND_CFA_RBP;
		else
			r.cfa_type = UNWIND_CFA_INVALID;
		if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX)
			r.cfa_type = UNWIND_CFA_INVALID;
		break;
	case CFA_PLT:
		r.cfa_type = UNWIND_CFA_PLT;
		break;
	default:
		r.cfa_type = UNWIND_CFA_INVALID;
		break;
	}
	if (r.cfa_type == UNWIND_CFA_INVALID)
		return r;
	r.cfa_off = (int32_t)s->cfa_off;
	switch (s->rbp_kind) {
	case RULE_OFFSET:
		if (s->rbp_off < INT16_MIN || s->rbp_off > INT16_MAX) {
			r.rbp_type = UNWIND_RBP_INVALID;
		} else {
			r.rbp_type = UNWIND_RBP_OFFSET;
			r.rbp_off = (int16_t)s->rbp_off;
		}
		break;
	case RULE_OTHER:
		r.rbp_type = UNWIND_RBP_INVALID;
		break;
	default:
		r.rbp_type = UNWIND_RBP_SAME;
		break;
	}
	return r;
}

static int run__emit(struct cfi_run *r)
{
	struct unwind_rule row;

	if (!r->emit || r->loc >= r->end)
		return 0;
	row = state_row(&r->st);
	if (r->have_last && row_same(&row, &r->last))
		return 0;
	r->last = row;
	r->have_last = true;
	return cfi_builder__add_vrow(r->b, r->loc, &row);
}

/* Moves to loc, emitting the row that held up to it. */
static int run__advance(struct cfi_run *r, uint64_t loc)
{
	int err;

	if (loc < r->loc || !r->emit)
		return -EINVAL;
	if (loc == r->loc)
		return 0;
	err = run__emit(r);
	r->loc = loc;
	return err;
}

static int run__advance_by(struct cfi_run *r, uint64_t delta)
{
	uint64_t step, loc;

	if (__builtin_mul_overflow(delta, r->cie->code_align, &step) ||
	    __builtin_add_overflow(r->loc, step, &loc))
		loc = UINT64_MAX;
	return run__advance(r, loc);
}

static void run__set_reg(struct cfi_run *r, uint64_t reg, uint8_t kind, int64_t off)
{
	if (reg == DW_REG_RBP) {
		r->st.rbp_kind = kind;
		r->st.rbp_off = off;
	}
	if (reg == r->cie->ra_reg)
		r->st.ra_undef = kind == RULE_UNDEF;
}

/* reg saved at cfa + factored * data_align. */
static void run__set_offset(struct cfi_run *r, uint64_t reg, int64_t factored)
{
	int64_t off;

	if (__builtin_mul_overflow(factored, r->cie->data_align, &off))
		run__set_reg(r, reg, RULE_OTHER, 0);
	else
		run__set_reg(r, reg, RULE_OFFSET, off);
}

static void run__restore(struct cfi_run *r, uint64_t reg)
{
	if (reg == DW_REG_RBP) {
		r->st.rbp_kind = r->init->rbp_kind;
		r->st.rbp_off = r->init->rbp_off;
	}
	if (reg == r->cie->ra_reg)
		r->st.ra_undef = r->init->ra_undef;
}

static void run__def_cfa(struct cfi_run *r, uint64_t reg, int64_t off)
{
	r->st.cfa_kind = CFA_REG;
	r->st.cfa_reg = reg;
	r->st.cfa_off = off;
}

/*
 * The CFA expression ld gives lazy .plt entries: rsp + 8, plus 8 more once the entry has pushed
 * its relocation index, that is from byte threshold of each 16-byte entry on.
 */
static bool plt_expression(const uint8_t *p, uint64_t n, uint32_t *threshold)
{
	static const uint8_t head[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a }; /* breg7 8; breg16 0;
									       lit15; and */
	static const uint8_t tail[] = { 0x2a, 0x33, 0x24, 0x22 }; /* ge; lit3; shl; plus */

	if (n != sizeof(head) + 1 + sizeof(tail) || memcmp(p, head, sizeof(head)) ||
	    memcmp(p + sizeof(head) + 1, tail, sizeof(tail)))
		return false;
	if (p[sizeof(head)] < 0x30 || p[sizeof(head)] > 0x4f) /* DW_OP_lit0..31 */
		return false;
	*threshold = p[sizeof(head)] - 0x30;
	return true;
}

/*
 * Runs the instructions [p, end). Returns 0, -EINVAL for a malformed or unknown instruction, or
 * -ENOMEM. Without emit (a CIE's initial instructions) the location cannot move.
 */
static int run__insns(struct cfi_run *r, const uint8_t *p, const uint8_t *end)
{
	struct cur c = { p, end, false };
	uint64_t reg, v, n;
	uint32_t threshold;
	int err = 0;

	while (!err && c.p < c.end && !c.bad) {
		uint8_t op = *c.p++;

		/* Past the FDE's end nothing more can show. */
		if (r->emit && r->loc >= r->end)
			return 0;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			err = run__advance_by(r, op & 0x3f);
			continue;
		case DW_CFA_offset:
			run__set_offset(r, op & 0x3f, (int64_t)cur_uleb(&c));
			continue;
		case DW_CFA_restore:
			run__restore(r, op & 0x3f);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			break;
		case DW_CFA_set_loc:
			if (!r->cie || !read_ptr(&c, r->cie->fde_enc, r->ptr, r->cie->addr_size, false,
						 &v))
				return -EINVAL;
			err = run__advance(r, v);
			break;
		case DW_CFA_advance_loc1:
			err = run__advance_by(r, cur_le(&c, 1));
			break;
		case DW_CFA_advance_loc2:
			err = run__advance_by(r, cur_le(&c, 2));
			break;
		case DW_CFA_advance_loc4:
			err = run__advance_by(r, cur_le(&c, 4));
			break;
		case DW_CFA_MIPS_advance_loc8:
			err = run__advance_by(r, cur_le(&c, 8));
			break;
		case DW_CFA_offset_extended:
			reg = cur_uleb(&c);
			run__set_offset(r, reg, (int64_t)cur_uleb(&c));
			break;
		case DW_CFA_offset_extended_sf:
			reg = cur_uleb(&c);
			run__set_offset(r, reg, cur_sleb(&c));
			break;
		case DW_CFA_GNU_negative_offset_extended:
			reg = cur_uleb(&c);
			/* Negated unsigned: no overflow for 1 << 63. */
			run__set_offset(r, reg, (int64_t)(0 - cur_uleb(&c)));
			break;
		case DW_CFA_restore_extended:
			run__restore(r, cur_uleb(&c));
			break;
		case DW_CFA_undefined:
			run__set_reg(r, cur_uleb(&c), RULE_UNDEF, 0);
			break;
		case DW_CFA_same_value:
			run__set_reg(r, cur_uleb(&c), RULE_SAME, 0);
			break;
		case DW_CFA_register:
			reg = cur_uleb(&c);
			cur_uleb(&c);
			run__set_reg(r, reg, RULE_OTHER, 0);
			break;
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
			reg = cur_uleb(&c);
			cur_uleb(&c); /* the same bytes whether signed or not */
			run__set_reg(r, reg, RULE_OTHER, 0);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			reg = cur_uleb(&c);
			cur_skip(&c, cur_uleb(&c));
			run__set_reg(r, reg, RULE_OTHER, 0);
			break;
		case DW_CFA_remember_state:
			if (r->depth == CFI_STACK_MAX)
				return -EINVAL;
			r->stack[r->depth++] = r->st;
			break;
		case DW_CFA_restore_state:
			if (!r->depth)
				return -EINVAL;
			/* The CFA is part of the saved state too (DWARF 5 6.4.2.4). */
			r->st = r->stack[--r->depth];
			break;
		case DW_CFA_def_cfa:
			reg = cur_uleb(&c);
			run__def_cfa(r, reg, (int64_t)cur_uleb(&c));
			break;
		case DW_CFA_def_cfa_sf:
			reg = cur_uleb(&c);
			v = cur_sleb(&c);
			if (__builtin_mul_overflow((int64_t)v, r->cie->data_align, &r->st.cfa_off))
				r->st.cfa_kind = CFA_BAD;
			else
				run__def_cfa(r, reg, r->st.cfa_off);
			break;
		case DW_CFA_def_cfa_register:
			reg = cur_uleb(&c);
			if (r->st.cfa_kind != CFA_REG)
				run__def_cfa(r, reg, 0);
			r->st.cfa_reg = reg;
			break;
		case DW_CFA_def_cfa_offset:
			/* Keeps the register; meaningless after an expression. */
			r->st.cfa_off = (int64_t)cur_uleb(&c);
			if (r->st.cfa_kind == CFA_PLT)
				r->st.cfa_kind = CFA_BAD;
			break;
		case DW_CFA_def_cfa_offset_sf:
			if (__builtin_mul_overflow(cur_sleb(&c), r->cie->data_align, &r->st.cfa_off) ||
			    r->st.cfa_kind == CFA_PLT)
				r->st.cfa_kind = CFA_BAD;
			break;
		case DW_CFA_def_cfa_expression:
			n = cur_uleb(&c);
			if (!cur_has(&c, n))
				return -EINVAL;
			if (plt_expression(c.p, n, &threshold)) {
				r->st.cfa_kind = CFA_PLT;
				r->st.cfa_off = threshold;
			} else {
				r->st.cfa_kind = CFA_BAD;
			}
			c.p += n;
			break;
		case DW_CFA_GNU_args_size:
			cur_uleb(&c);
			break;
		case DW_CFA_GNU_window_save:
			break;
		default:
			/* Unknown operands: the rest of the program cannot be decoded. */
			return -EINVAL;
		}
	}
	if (c.bad)
		return -EINVAL;
	return err;
}

/* Reads an entry's length at off. Returns false if it does not fit in the section. */
static bool entry_at(const uint8_t *data, size_t size, uint64_t off, struct cur *body,
		     bool *is64, bool *zero)
{
	struct cur c = { data, data + size, false };
	uint64_t len;

	*zero = false;
	*is64 = false;
	/* off may come from a CIE pointer: check it before pointing anywhere with it. */
	if (off > size)
		return false;
	c.p += off;
	len = cur_le(&c, 4);
	if (len == 0xffffffff) {
		len = cur_le(&c, 8);
		*is64 = true;
	}
	if (c.bad)
		return false;
	if (!len) {
		*zero = true;
		body->p = body->end = c.p;
		body->bad = false;
		return true;
	}
	if (len > (uint64_t)(c.end - c.p))
		return false;
	body->p = c.p;
	body->end = c.p + len;
	body->bad = false;
	return true;
}

static int cie_parse(struct cfi_section *s, uint64_t off, struct cfi_cie *cie)
{
	struct cfi_state def;
	struct cfi_run *r;
	struct cur c;
	const char *aug;
	size_t aug_len;
	uint8_t version;
	bool is64, zero;
	uint64_t id;
	int err;

	memset(cie, 0, sizeof(*cie));
	cie->off = off;
	cie->status = -EINVAL;
	cie->addr_size = 8;
	cie->fde_enc = DW_EH_PE_absptr;
	if (!entry_at(s->data, s->size, off, &c, &is64, &zero) || zero)
		return -EINVAL;
	id = cur_le(&c, s->ptr.debug_frame && is64 ? 8 : 4);
	if (s->ptr.debug_frame ? id != (is64 ? UINT64_MAX : 0xffffffffu) : id != 0)
		return -EINVAL;
	version = cur_u8(&c);
	if (c.bad || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	aug = (const char *)c.p;
	aug_len = strnlen(aug, c.end - c.p);
	if (aug_len == (size_t)(c.end - c.p))
		return -EINVAL;
	c.p += aug_len + 1;
	/* "eh" (a pointer to exception tables in the CIE) is pre-1998 g++. */
	if (strstr(aug, "eh"))
		return -EINVAL;
	if (version == 4) {
		cie->addr_size = cur_u8(&c);
		if (cur_u8(&c) != 0 || (cie->addr_size != 4 && cie->addr_size != 8))
			return -EINVAL;
	}
	cie->code_align = cur_uleb(&c);
	cie->data_align = cur_sleb(&c);
	cie->ra_reg = version == 1 ? cur_u8(&c) : cur_uleb(&c);
	if (aug[0] == 'z') {
		uint64_t len = cur_uleb(&c);
		struct cur a = { c.p, c.p, c.bad };
		uint64_t skip;

		if (!cur_has(&c, len))
			return -EINVAL;
		a.end = c.p + len;
		c.p = a.end;
		cie->has_z = true;
		for (size_t i = 1; i < aug_len && !a.bad; i++) {
			if (aug[i] == 'R') {
				cie->fde_enc = cur_u8(&a);
			} else if (aug[i] == 'P') {
				uint8_t enc = cur_u8(&a);

				if (enc == DW_EH_PE_omit ||
				    !read_ptr(&a, enc, &s->ptr, cie->addr_size, true, &skip))
					return -EINVAL;
			} else if (aug[i] == 'L') {
				cur_u8(&a);
			} else if (aug[i] == 'S') {
				cie->signal = true;
			} else {
				/* Unknown: 'z' lets the rest of the data be skipped. */
				break;
			}
		}
		if (a.bad)
			return -EINVAL;
	} else if (aug[0]) {
		return -EINVAL;
	}
	if (c.bad || !cie->code_align)
		return -EINVAL;
	cie->insns = c.p;
	cie->insns_end = c.end;

	/* Rules before any instruction: CFA unknown, rbp and the return address unsaved. */
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cie = cie;
	r->ptr = &s->ptr;
	r->st.cfa_kind = CFA_BAD;
	r->st.rbp_kind = RULE_SAME;
	def = r->st;
	r->init = &def;
	err = run__insns(r, cie->insns, cie->insns_end);
	cie->init = r->st;
	free(r);
	if (err)
		return err;
	cie->status = 0;
	return 0;
}

static const struct cfi_cie *cie_get(struct cfi_section *s, uint64_t off, int *err)
{
	struct cfi_cie *cie = &s->cies[(off >> 2) % CIE_CACHE];

	*err = 0;
	if (cie->status == 1 || cie->off != off) {
		*err = cie_parse(s, off, cie);
		if (*err == -ENOMEM) {
			cie->status = 1;
			return NULL;
		}
		*err = 0;
	}
	return cie->status ? NULL : cie;
}

/* Parses the FDE whose body (after the CIE pointer) is c. Returns 1 if it gave rows. */
static int fde_parse(struct cfi_section *s, const struct cfi_cie *cie, struct cur *c,
		     struct cfi_run *r)
{
	uint8_t prio = s->ptr.debug_frame ? PRIO_DEBUG_FRAME : PRIO_EH_FRAME;
	uint64_t start, range, end;
	struct cfi_fde *f;
	int err;

	if (!read_ptr(c, cie->fde_enc, &s->ptr, cie->addr_size, false, &start) ||
	    !read_ptr(c, cie->fde_enc & 0x0f, &s->ptr, cie->addr_size, true, &range))
		return 0;
	if (cie->has_z)
		cur_skip(c, cur_uleb(c));
	if (c->bad || !range || __builtin_add_overflow(start, range, &end))
		return 0;

	f = cfi_builder__open_fde(s->b, start, end, prio);
	if (!f)
		return -ENOMEM;
	if (cie->signal) {
		struct unwind_rule row = { .cfa_type = UNWIND_CFA_SIGNAL };

		err = cfi_builder__add_vrow(s->b, start, &row);
	} else {
		memset(r, 0, offsetof(struct cfi_run, stack));
		r->b = s->b;
		r->cie = cie;
		r->ptr = &s->ptr;
		r->init = &cie->init;
		r->st = cie->init;
		r->loc = start;
		r->end = end;
		r->emit = true;
		err = run__insns(r, c->p, c->end);
		if (!err)
			err = run__emit(r);
	}
	if (err == -ENOMEM) {
		cfi_builder__close_fde(s->b, f, false);
		return -ENOMEM;
	}
	if (err)
		pr_debug("FDE at %#" PRIx64 ": malformed program, no rows\n", start);
	cfi_builder__close_fde(s->b, f, !err);
	return !err;
}

int cfi__parse_section(struct cfi_builder *b, const uint8_t *data, size_t size,
		       uint64_t section_vaddr, bool debug_frame)
{
	struct cfi_section *s;
	struct cfi_run *r;
	uint64_t off = 0;
	int nr = 0, err = 0;

	s = malloc(sizeof(*s));
	r = malloc(sizeof(*r));
	if (!s || !r) {
		err = -ENOMEM;
		goto out_free;
	}
	s->b = b;
	s->data = data;
	s->size = size;
	s->ptr = (struct ptr_ctx){ data, section_vaddr, b->data_base, b->has_data_base,
				   debug_frame };
	for (size_t i = 0; i < CIE_CACHE; i++)
		s->cies[i].status = 1;

	while (off < size) {
		const struct cfi_cie *cie;
		bool is64, zero;
		struct cur c;
		uint64_t id, id_off, cie_off;

		if (!entry_at(data, size, off, &c, &is64, &zero))
			break;
		if (zero) {
			/* The terminator; .debug_frame has none but may be padded. */
			if (!debug_frame)
				break;
			off = c.end - data;
			continue;
		}
		off = c.end - data;
		id_off = c.p - data;
		id = cur_le(&c, debug_frame && is64 ? 8 : 4);
		if (c.bad)
			continue;
		if (debug_frame) {
			if (id == (is64 ? UINT64_MAX : 0xffffffffu))
				continue;
			cie_off = id;
		} else {
			if (!id)
				continue;
			/* .eh_frame points back from the pointer itself. */
			if (id > id_off)
				continue;
			cie_off = id_off - id;
		}
		cie = cie_get(s, cie_off, &err);
		if (err)
			goto out_free;
		if (!cie)
			continue;
		err = fde_parse(s, cie, &c, r);
		if (err < 0)
			goto out_free;
		nr += err;
		err = 0;
	}
out_free:
	free(r);
	free(s);
	return err ? err : nr;
}

struct elf_cfi {
	Elf_Scn *eh_frame, *debug_frame, *plt, *plt_got, *plt_sec;
	GElf_Shdr eh_frame_sh, debug_frame_sh, plt_sh, plt_got_sh, plt_sec_sh;
	uint64_t got;
	bool has_got;
	bool go;
};

static void elf_cfi__scan(Elf *elf, size_t shstrndx, struct elf_cfi *ec)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".gopclntab") || !strcmp(name, ".note.go.buildid") ||
		    !strcmp(name, ".data.rel.ro.gopclntab")) {
			ec->go = true;
		} else if (sh.sh_type == SHT_NOBITS) {
			/* A separate debug file's copies of the allocated sections. */
			continue;
		} else if (!strcmp(name, ".eh_frame")) {
			ec->eh_frame = scn;
			ec->eh_frame_sh = sh;
		} else if (!strcmp(name, ".debug_frame")) {
			ec->debug_frame = scn;
			ec->debug_frame_sh = sh;
		} else if (!strcmp(name, ".plt")) {
			ec->plt = scn;
			ec->plt_sh = sh;
		} else if (!strcmp(name, ".plt.got")) {
			ec->plt_got = scn;
			ec->plt_got_sh = sh;
		} else if (!strcmp(name, ".plt.sec")) {
			ec->plt_sec = scn;
			ec->plt_sec_sh = sh;
		} else if (!strcmp(name, ".got")) {
			ec->got = sh.sh_addr;
			ec->has_got = true;
		}
	}
}

static int parse_scn(struct cfi_builder *b, Elf_Scn *scn, const GElf_Shdr *sh, bool debug_frame)
{
	Elf_Data *data;
	int err;

	if (sh->sh_flags & SHF_COMPRESSED) {
		if (elf_compress(scn, 0, 0) < 0) {
			pr_debug("elf_compress: %s\n", elf_errmsg(-1));
			return 0;
		}
	}
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return 0;
	err = cfi__parse_section(b, data->d_buf, data->d_size, sh->sh_addr, debug_frame);
	return err < 0 ? err : 0;
}

static int build_elf(Elf *elf, int fd, struct cfi_table *out)
{
	/* .plt.got and .plt.sec entries jump away without touching the stack. */
	static const struct unwind_rule jmp_only = { .cfa_type = UNWIND_CFA_RSP, .cfa_off = 8 };
	static const struct unwind_rule outermost = { .cfa_type = UNWIND_CFA_UNDEFINED };
	struct elf_cfi ec = {};
	struct cfi_builder *b;
	size_t shstrndx, phnum;
	GElf_Ehdr eh;
	bool cfi;
	int err;

	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	/* Register numbers and the return address at cfa-8 are x86-64's. */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0)
		elf_cfi__scan(elf, shstrndx, &ec);
	if (elf_getphdrnum(elf, &phnum))
		return 0;

	b = cfi_builder__new();
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			cfi_builder__add_segment(b, ph.p_vaddr, ph.p_filesz, ph.p_offset);
	}
	if (ec.has_got)
		cfi_builder__set_data_base(b, ec.got);
	err = 0;
	if (ec.eh_frame)
		err = parse_scn(b, ec.eh_frame, &ec.eh_frame_sh, false);
	/* Go code: the runtime's own stack deltas (the C of a cgo binary has .eh_frame). */
	if (!err && ec.go) {
		err = gocfi__add(b, fd);
		err = err < 0 ? err : 0;
	}
	/* Only fills code .eh_frame leaves out (objects built -fno-asynchronous-unwind-tables). */
	if (!err && ec.debug_frame)
		err = parse_scn(b, ec.debug_frame, &ec.debug_frame_sh, true);
	/* (A file whose CFI gave nothing stays one of frame pointers: no rows of ours alone.) */
	cfi = b->nr_fdes > 0;
	if (!err && ec.plt_got)
		err = cfi_builder__add_synthetic(b, ec.plt_got_sh.sh_addr, ec.plt_got_sh.sh_size,
						 &jmp_only);
	if (!err && ec.plt_sec)
		err = cfi_builder__add_synthetic(b, ec.plt_sec_sh.sh_addr, ec.plt_sec_sh.sh_size,
						 &jmp_only);
	/*
	 * A lazy entry pushes its index after its first jmp (6 bytes), or with IBT (.plt.sec
	 * present, entries start with endbr64) after endbr64 and the push: 4 + 5 bytes.
	 */
	if (!err && ec.plt)
		err = cfi_builder__add_lazy_plt(b, ec.plt_sh.sh_addr, ec.plt_sh.sh_size,
						ec.plt_sec ? 9 : 11);
	/*
	 * The entry point's first instruction is where every process starts, with nothing on its
	 * stack to return to: the outermost frame. crt1's _start says so in its CFI; the dynamic
	 * loader's has none, and a process sampled before its first instruction ran (its first
	 * page fault, the exec's own tail) would otherwise end there in [truncated]. Only fills
	 * what the CFI leaves out.
	 */
	if (!err && cfi && eh.e_entry)
		err = cfi_builder__add_synthetic(b, eh.e_entry, 1, &outermost);
	if (!err)
		err = cfi_builder__finish(b, out);
	cfi_builder__free(b);
	return err;
}

int cfi__build(int fd, struct cfi_table *out)
{
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_err("libelf: %s\n", elf_errmsg(-1));
		return -ENOTSUP;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		pr_debug("elf_begin: %s\n", elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out_elf_end;
	}
	err = build_elf(elf, fd, out);
	if (err)
		cfi_table__release(out);
	else if (!out->nr)
		out->flags = UNWIND_FILE_FP;
out_elf_end:
	elf_end(elf);
	return err;
}
