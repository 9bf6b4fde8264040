// SPDX-License-Identifier: GPL-2.0-only
/*
 * The rows of a file's FDEs, from every source (.eh_frame, .debug_frame, Go's .gopclntab,
 * synthetic PLT rows), mapped to file offsets and ordered into one table: where FDEs overlap,
 * the source of lower priority hides the others.
 */
#define pr_fmt(fmt) "cfi: " fmt

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"
#include "unwind/cfi_priv.h"

void *cfi__grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	while (n < need)
		n *= 2;
	q = realloc(p, n * elem);
	if (q)
		*cap = n;
	return q;
}

int cfi_builder__add_vrow(struct cfi_builder *b, uint64_t pc, const struct unwind_rule *r)
{
	if (b->nr_vrows == b->cap_vrows) {
		struct cfi_vrow *v = cfi__grow(b->vrows, &b->cap_vrows, b->nr_vrows + 1, sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->vrows = v;
	}
	b->vrows[b->nr_vrows].pc = pc;
	b->vrows[b->nr_vrows].r = *r;
	b->nr_vrows++;
	return 0;
}

/* Opens an FDE whose rows are the vrows added from now on. */
struct cfi_fde *cfi_builder__open_fde(struct cfi_builder *b, uint64_t start, uint64_t end,
					 uint8_t prio)
{
	struct cfi_fde *f;

	if (b->nr_fdes == b->cap_fdes) {
		f = cfi__grow(b->fdes, &b->cap_fdes, b->nr_fdes + 1, sizeof(*f));
		if (!f)
			return NULL;
		b->fdes = f;
	}
	f = &b->fdes[b->nr_fdes];
	memset(f, 0, sizeof(*f));
	f->start = start;
	f->end = end;
	f->row = b->nr_vrows;
	f->seq = b->nr_fdes;
	f->prio = prio;
	return f;
}

/* Keeps the FDE opened last if it got rows, else forgets it. */
void cfi_builder__close_fde(struct cfi_builder *b, struct cfi_fde *f, bool ok)
{
	if (!ok || b->nr_vrows == f->row || b->nr_vrows - f->row > UINT32_MAX) {
		b->nr_vrows = f->row;
		return;
	}
	f->nr = b->nr_vrows - f->row;
	b->nr_fdes++;
}

struct cfi_builder *cfi_builder__new(void)
{
	return calloc(1, sizeof(struct cfi_builder));
}

void cfi_builder__free(struct cfi_builder *b)
{
	if (!b)
		return;
	free(b->vrows);
	free(b->fdes);
	free(b);
}

int cfi_builder__add_segment(struct cfi_builder *b, uint64_t vaddr, uint64_t size,
			     uint64_t offset)
{
	if (b->nr_segs == CFI_MAX_SEGS)
		return -E2BIG;
	b->segs[b->nr_segs++] = (struct cfi_seg){ vaddr, size, offset };
	return 0;
}

void cfi_builder__set_data_base(struct cfi_builder *b, uint64_t data_base)
{
	b->data_base = data_base;
	b->has_data_base = true;
}

int cfi_builder__add_synthetic(struct cfi_builder *b, uint64_t vaddr, uint64_t size,
			       const struct unwind_rule *rule)
{
	struct cfi_fde *f;
	int err;

	if (!size || vaddr + size < vaddr)
		return 0;
	f = cfi_builder__open_fde(b, vaddr, vaddr + size, PRIO_SYNTHETIC);
	if (!f)
		return -ENOMEM;
	err = cfi_builder__add_vrow(b, vaddr, rule);
	cfi_builder__close_fde(b, f, !err);
	return err;
}

int cfi_builder__add_rows(struct cfi_builder *b, uint64_t start, uint64_t end,
			  const uint64_t *pc, const struct unwind_rule *rows, size_t nr)
{
	struct cfi_fde *f;
	int err = 0;

	if (!nr || end <= start || pc[0] != start)
		return 0;
	f = cfi_builder__open_fde(b, start, end, PRIO_ROWS);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < nr && !err; i++) {
		if (pc[i] >= end || (i && pc[i] <= pc[i - 1]))
			break;
		err = cfi_builder__add_vrow(b, pc[i], &rows[i]);
	}
	cfi_builder__close_fde(b, f, !err);
	return err;
}

int cfi_builder__add_lazy_plt(struct cfi_builder *b, uint64_t vaddr, uint64_t size,
			      uint32_t threshold)
{
	/* PLT0 pushes the GOT's second word (6 bytes), then jumps: the entry's push is there. */
	static const struct unwind_rule plt0[] = {
		{ .cfa_type = UNWIND_CFA_RSP, .cfa_off = 16 },
		{ .cfa_type = UNWIND_CFA_RSP, .cfa_off = 24 },
	};
	struct unwind_rule plt = { .cfa_type = UNWIND_CFA_PLT, .cfa_off = threshold };
	struct cfi_fde *f;
	int err;

	if (size <= 16 || vaddr + size < vaddr)
		return 0;
	f = cfi_builder__open_fde(b, vaddr, vaddr + size, PRIO_SYNTHETIC);
	if (!f)
		return -ENOMEM;
	err = cfi_builder__add_vrow(b, vaddr, &plt0[0]);
	if (!err)
		err = cfi_builder__add_vrow(b, vaddr + 6, &plt0[1]);
	if (!err)
		err = cfi_builder__add_vrow(b, vaddr + 16, &plt);
	cfi_builder__close_fde(b, f, !err);
	return err;
}

/* Maps an FDE to file offsets through the segment holding its start; false if none does. */
static bool builder__map_fde(const struct cfi_builder *b, struct cfi_fde *f)
{
	for (unsigned int i = 0; i < b->nr_segs; i++) {
		const struct cfi_seg *seg = &b->segs[i];
		uint64_t end;

		if (f->start < seg->vaddr || f->start - seg->vaddr >= seg->size)
			continue;
		end = f->end - seg->vaddr < seg->size ? f->end : seg->vaddr + seg->size;
		f->delta = (int64_t)(seg->offset - seg->vaddr);
		f->start += f->delta;
		end += f->delta;
		/* Rows hold 32-bit offsets: code past 4 GiB into a file is not unwound. */
		if (f->start >= UINT32_MAX || f->start < seg->offset)
			return false;
		f->end = end > UINT32_MAX ? UINT32_MAX : end;
		return f->end > f->start;
	}
	return false;
}

static int fde_cmp(const void *pa, const void *pb)
{
	const struct cfi_fde *a = *(const struct cfi_fde *const *)pa;
	const struct cfi_fde *b = *(const struct cfi_fde *const *)pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Whether [f->start, f->end) overlaps one of the n sorted FDEs, maxend their running max end. */
static bool overlaps(struct cfi_fde **set, const uint64_t *maxend, size_t n,
		     const struct cfi_fde *f)
{
	size_t lo = 0, hi = n;

	/* The last FDE starting before f ends: any overlapping one is at or before it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set[mid]->start < f->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && maxend[lo - 1] > f->start;
}

/* Appends a file-offset row, keeping pcs increasing and consecutive rules different. */
static void rows_append(struct unwind_row *rows, uint32_t *nr, uint64_t pc,
			const struct unwind_rule *r)
{
	struct unwind_row row = { .pc = (uint32_t)pc, .rule = unwind_rule__pack(r) };

	/* A later FDE starting where an earlier one was cut short replaces its row there. */
	if (*nr && rows[*nr - 1].pc == row.pc)
		(*nr)--;
	if (*nr && rows[*nr - 1].rule == row.rule)
		return;
	rows[(*nr)++] = row;
}

int cfi_builder__finish(struct cfi_builder *b, struct cfi_table *out)
{
	static const struct unwind_rule none = { .cfa_type = UNWIND_CFA_NONE };
	struct cfi_fde **all, **set = NULL, **tmp = NULL;
	size_t nr_all = 0, nr_set = 0, total = 0;
	uint64_t *maxend = NULL;
	struct unwind_row *rows = NULL;
	uint32_t nr = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	all = malloc((b->nr_fdes + 1) * sizeof(*all));
	set = malloc((b->nr_fdes + 1) * sizeof(*set));
	tmp = malloc((b->nr_fdes + 1) * sizeof(*tmp));
	maxend = malloc((b->nr_fdes + 1) * sizeof(*maxend));
	if (!all || !set || !tmp || !maxend)
		goto out_free;
	for (size_t i = 0; i < b->nr_fdes; i++) {
		if (builder__map_fde(b, &b->fdes[i]))
			all[nr_all++] = &b->fdes[i];
	}
	qsort(all, nr_all, sizeof(*all), fde_cmp);

	/* Each priority fills only what the better ones leave uncovered. */
	for (uint8_t prio = 0; prio < PRIO__MAX; prio++) {
		size_t n = 0, i = 0, j = 0, k = 0;

		for (size_t a = 0; a < nr_all; a++) {
			if (all[a]->prio == prio && !overlaps(set, maxend, nr_set, all[a]))
				tmp[n++] = all[a];
		}
		if (!n)
			continue;
		/* Merge the two sorted lists; all[] is sorted so merging preserves seq order. */
		{
			struct cfi_fde **merged = malloc((nr_set + n) * sizeof(*merged));

			if (!merged)
				goto out_free;
			while (i < nr_set || j < n) {
				if (j == n || (i < nr_set && fde_cmp(&set[i], &tmp[j]) <= 0))
					merged[k++] = set[i++];
				else
					merged[k++] = tmp[j++];
			}
			memcpy(set, merged, k * sizeof(*set));
			free(merged);
		}
		nr_set = k;
		for (i = 0; i < nr_set; i++)
			maxend[i] = i && maxend[i - 1] > set[i]->end ? maxend[i - 1] : set[i]->end;
	}

	for (size_t i = 0; i < nr_set; i++)
		total += set[i]->nr + 1;
	if (total > UINT32_MAX) {
		err = -E2BIG;
		goto out_free;
	}
	rows = malloc((total + 1) * sizeof(*rows));
	if (!rows)
		goto out_free;
	for (size_t i = 0; i < nr_set; i++) {
		const struct cfi_fde *f = set[i];
		uint64_t limit = f->end;
		bool gap = true;

		if (i + 1 < nr_set && set[i + 1]->start <= f->end) {
			gap = false;
			if (set[i + 1]->start < limit)
				limit = set[i + 1]->start;
		}
		for (uint32_t j = 0; j < f->nr; j++) {
			const struct cfi_vrow *v = &b->vrows[f->row + j];
			uint64_t pc = v->pc + f->delta;

			if (pc >= limit)
				break;
			rows_append(rows, &nr, pc, &v->r);
		}
		if (gap)
			rows_append(rows, &nr, f->end, &none);
	}
	err = 0;
	if (nr) {
		struct unwind_row *shrunk = realloc(rows, nr * sizeof(*rows));

		out->rows = shrunk ? shrunk : rows;
		rows = NULL;
	}
	out->nr = nr;
	out->flags = nr ? 0 : UNWIND_FILE_FP;
out_free:
	free(rows);
	free(maxend);
	free(tmp);
	free(set);
	free(all);
	return err;
}

void cfi_table__release(struct cfi_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* The sections cfi__build reads, by name. */
