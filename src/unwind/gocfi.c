// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "gocfi: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "symbolize/gosym.h"
#include "unwind/gocfi.h"

struct gocfi_ctx {
	struct cfi_builder *b;
	struct unwind_rule *rows;
	size_t cap;
	int added;
	/* runtime.asmcgocall (the assembly), and the frame of runtime.cgocall, which calls it
	 * for every cgo call (directly, not through the ABI wrapper of the same name). */
	struct go_func_sp asmcgocall; /* its pc and delta arrays copied */
	int32_t cgocall_frame;
};

static int rows_reserve(struct gocfi_ctx *c, size_t n)
{
	struct unwind_rule *rows;

	if (n <= c->cap)
		return 0;
	rows = realloc(c->rows, n * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	c->rows = rows;
	c->cap = n;
	return 0;
}

static int32_t max_delta(const struct go_func_sp *f)
{
	int32_t m = 0;

	for (size_t i = 0; i < f->nr; i++)
		m = f->delta[i] > m ? f->delta[i] : m;
	return m;
}

/*
 * The row of a pc where a Go function holds delta bytes below its entry sp. Go's amd64
 * prologue (SUBQ $n, SP; MOVQ BP, n-8(SP); LEAQ n-8(SP), BP) saves the caller's BP right
 * below the return address in any function with a frame; a frameless one (delta 0 throughout,
 * as a leaf often is) leaves BP alone.
 */
static struct unwind_rule go_row(int32_t delta)
{
	struct unwind_rule r = { .cfa_type = UNWIND_CFA_RSP, .cfa_off = delta + 8 };

	if (delta >= 8) {
		r.rbp_type = UNWIND_RBP_OFFSET;
		r.rbp_off = -16;
	}
	return r;
}

static int gocfi__func(const struct go_func_sp *f, void *arg)
{
	struct gocfi_ctx *c = arg;
	int err;

	if (f->spwrite && !strcmp(f->name, "runtime.asmcgocall") && !c->asmcgocall.nr) {
		uint64_t *pc = malloc(f->nr * sizeof(*pc));
		int32_t *delta = malloc(f->nr * sizeof(*delta));

		if (!pc || !delta) {
			free(pc);
			free(delta);
			return -ENOMEM;
		}
		memcpy(pc, f->pc, f->nr * sizeof(*pc));
		memcpy(delta, f->delta, f->nr * sizeof(*delta));
		c->asmcgocall = *f;
		c->asmcgocall.pc = pc;
		c->asmcgocall.delta = delta;
		return 0;
	}
	if (!strcmp(f->name, "runtime.cgocall"))
		c->cgocall_frame = max_delta(f);
	/* Stack switches: their deltas do not lead to the caller, nor does Go's .debug_frame,
	 * made from them; they are walked by frame pointer, as before. */
	if (f->spwrite) {
		static const struct unwind_rule fp = { .cfa_type = UNWIND_CFA_NONE };

		err = cfi_builder__add_rows(c->b, f->entry, f->end, &f->entry, &fp, 1);
		goto out;
	}
	if (f->topframe) {
		/* A goroutine's (or thread's) first frame: nothing above it is a caller. */
		static const struct unwind_rule top = { .cfa_type = UNWIND_CFA_UNDEFINED };

		err = cfi_builder__add_rows(c->b, f->entry, f->end, &f->entry, &top, 1);
		goto out;
	}
	if (rows_reserve(c, f->nr))
		return -ENOMEM;
	for (size_t i = 0; i < f->nr; i++)
		c->rows[i] = go_row(f->delta[i]);
	err = cfi_builder__add_rows(c->b, f->entry, f->end, f->pc, c->rows, f->nr);
out:
	if (!err)
		c->added++;
	return err;
}

/*
 * A cgo call: C runs on the system stack, called from runtime.asmcgocall, which switched to it
 * from the goroutine's stack; BP still leads back to the goroutine's stack. Go 1.21+ opens a
 * frame there first (PUSHQ BP; MOVQ SP, BP): wherever it holds one, its cfa is BP + 16. Before,
 * it did not touch BP, which stays the frame base of runtime.cgocall, whose frame ends right
 * below asmcgocall's cfa: BP + 16 - (8 + cgocall's frame). The walk thus crosses back from the
 * C frames (.eh_frame) to the Go ones. (The runtime's few other callers of a frameless
 * asmcgocall have other frames: a sample under one of those reads a wrong caller.)
 */
static int gocfi__asmcgocall(struct gocfi_ctx *c, const struct go_func_sp *f)
{
	static const struct unwind_rule framed = { .cfa_type = UNWIND_CFA_RBP_SWITCH,
						  .cfa_off = 16,
						  .rbp_type = UNWIND_RBP_OFFSET,
						  .rbp_off = -16 };
	struct unwind_rule frameless = { .cfa_type = UNWIND_CFA_RBP_SWITCH,
					.cfa_off = 8 - c->cgocall_frame };
	bool has_frame = false;

	for (size_t i = 0; i < f->nr; i++)
		has_frame |= f->delta[i] == 8;
	if (!has_frame) {
		if (c->cgocall_frame < 8)
			return 0;
		return cfi_builder__add_rows(c->b, f->entry, f->end, &f->entry, &frameless, 1);
	}
	/* Where it holds no frame, it is on the goroutine's stack: sp leads to the caller. */
	if (rows_reserve(c, f->nr))
		return -ENOMEM;
	for (size_t i = 0; i < f->nr; i++)
		c->rows[i] = f->delta[i] == 8 ? framed : go_row(0);
	return cfi_builder__add_rows(c->b, f->entry, f->end, f->pc, c->rows, f->nr);
}

int gocfi__add(struct cfi_builder *b, int fd)
{
	struct gocfi_ctx c = { .b = b };
	struct go_symtab *gs;
	int err;

	err = go_symtab__open(fd, &gs);
	if (err) {
		pr_debug("no usable .gopclntab: %d\n", err);
		return err == -ENOMEM ? err : 0;
	}
	err = go_symtab__for_each_sp(gs, gocfi__func, &c);
	if (!err && c.asmcgocall.nr)
		err = gocfi__asmcgocall(&c, &c.asmcgocall);
	free((void *)c.asmcgocall.pc);
	free((void *)c.asmcgocall.delta);
	free(c.rows);
	go_symtab__free(gs);
	return err < 0 ? err : c.added;
}
