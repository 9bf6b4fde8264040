// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "gocfi: " fmt

#include <errno.h>
#include <stdlib.h>

#include "../lib/log.h"
#include "../symbolize/gosym.h"
#include "gocfi.h"

struct gocfi_ctx {
	struct cfi_builder *b;
	struct unwind_row *rows;
	size_t cap;
	int added;
};

/*
 * The row of a pc where a Go function holds delta bytes below its entry sp. Go's amd64
 * prologue (SUBQ $n, SP; MOVQ BP, n-8(SP); LEAQ n-8(SP), BP) saves the caller's BP right
 * below the return address in any function with a frame; a frameless one (delta 0 throughout,
 * as a leaf often is) leaves BP alone.
 */
static struct unwind_row go_row(int32_t delta)
{
	struct unwind_row r = { .cfa_type = UNWIND_CFA_RSP, .cfa_off = delta + 8 };

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

	/* Stack switches: their deltas do not lead to the caller; the gap they leave is walked
	 * by frame pointer, as before. */
	if (f->spwrite)
		return 0;
	if (f->topframe) {
		/* A goroutine's (or thread's) first frame: nothing above it is a caller. */
		static const struct unwind_row top = { .cfa_type = UNWIND_CFA_UNDEFINED };
		err = cfi_builder__add_rows(c->b, f->entry, f->end, &f->entry, &top, 1);
		goto out;
	}
	if (f->nr > c->cap) {
		struct unwind_row *rows = realloc(c->rows, f->nr * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		c->rows = rows;
		c->cap = f->nr;
	}
	for (size_t i = 0; i < f->nr; i++)
		c->rows[i] = go_row(f->delta[i]);
	err = cfi_builder__add_rows(c->b, f->entry, f->end, f->pc, c->rows, f->nr);
out:
	if (!err)
		c->added++;
	return err;
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
	free(c.rows);
	go_symtab__free(gs);
	return err < 0 ? err : c.added;
}
