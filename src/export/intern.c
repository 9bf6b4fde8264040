// SPDX-License-Identifier: GPL-2.0-only
/* What the profile encoders share; see intern.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/strtab.h"
#include "symbolize/frame.h"
#include "symbolize/dso.h"
#include "symbolize/symbolizer.h"
#include "export/intern.h"

/* Makes room for one more entry, keeping the load factor at most 1/2. */
int htab__reserve(struct htab *t)
{
	uint32_t n, i, j;
	struct hslot *slots;

	if (t->slots && (t->nr + 1) * 2 <= t->mask + 1)
		return 0;
	n = t->slots ? (t->mask + 1) * 2 : 256;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; t->slots && i <= t->mask; i++) {
		if (!t->slots[i].idx)
			continue;
		for (j = t->slots[i].hash & (n - 1); slots[j].idx; j = (j + 1) & (n - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->mask = n - 1;
	return 0;
}

/*
 * Returns the slot holding key, or the empty slot where it belongs. The table must have been
 * reserved so that an empty slot exists.
 */
struct hslot *htab__find(struct htab *t, uint64_t hash, htab_eq_fn eq, const void *ctx,
			 const void *key)
{
	uint32_t i;

	for (i = hash & t->mask; t->slots[i].idx; i = (i + 1) & t->mask) {
		if (t->slots[i].hash == hash && eq(ctx, t->slots[i].idx - 1, key))
			return &t->slots[i];
	}
	return &t->slots[i];
}

void htab__insert(struct htab *t, struct hslot *slot, uint64_t hash, uint32_t idx)
{
	slot->hash = hash;
	slot->idx = idx + 1;
	t->nr++;
}

void htab__free(struct htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->mask = t->nr = 0;
}

int enc__init(struct enc *e, struct symbolizer *sym)
{
	memset(e, 0, sizeof(*e));
	e->sym = sym;
	e->st = strtab__new();
	return e->st ? 0 : -ENOMEM;
}

void enc__exit(struct enc *e)
{
	htab__free(&e->loc_ht);
	htab__free(&e->func_ht);
	htab__free(&e->map_ht);
	free(e->locs);
	free(e->lines);
	free(e->funcs);
	free(e->maps);
	strtab__free(e->st);
}

int64_t enc__intern(struct enc *e, const char *s)
{
	return strtab__intern(e->st, s);
}

int64_t enc__intern_n(struct enc *e, const char *s, size_t n)
{
	return strtab__intern_n(e->st, s, n);
}

static bool enc_map__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct enc *e = ctx;

	return e->maps[idx].dso == key;
}

/* Returns the mapping index + 1 of dso (0 for no dso), or a negative errno. */
static int64_t enc__mapping(struct enc *e, struct dso *dso)
{
	uint64_t h = hash__u64((uintptr_t)dso);
	struct enc_map *m, *maps;
	struct hslot *slot;
	int64_t path, build_id;

	if (!dso)
		return 0;
	if (htab__reserve(&e->map_ht))
		return -ENOMEM;
	slot = htab__find(&e->map_ht, h, enc_map__eq, e, dso);
	if (slot->idx)
		return slot->idx;
	maps = array__grow(e->maps, &e->cap_maps, e->nr_maps + 1, sizeof(*e->maps));
	if (!maps)
		return -ENOMEM;
	e->maps = maps;
	path = enc__intern(e, dso__path(dso));
	build_id = enc__intern(e, dso__build_id(dso));
	if (path < 0 || build_id < 0)
		return -ENOMEM;
	m = &e->maps[e->nr_maps];
	memset(m, 0, sizeof(*m));
	m->dso = dso;
	m->filename = path;
	m->build_id = build_id;
	htab__insert(&e->map_ht, slot, h, e->nr_maps);
	return ++e->nr_maps;
}

static bool enc_func__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct enc *e = ctx;
	const struct enc_func *a = &e->funcs[idx], *b = key;

	return a->name == b->name && a->system_name == b->system_name && a->file == b->file;
}

/* Returns the index of the function that l names, or a negative errno. */
static int64_t enc__function(struct enc *e, const struct sym_line *l)
{
	struct enc_func key = { l->function, l->system_name, l->file };
	uint64_t h = hash__bytes(&key, sizeof(key), 0);
	struct enc_func *funcs;
	struct hslot *slot;

	if (htab__reserve(&e->func_ht))
		return -ENOMEM;
	slot = htab__find(&e->func_ht, h, enc_func__eq, e, &key);
	if (slot->idx)
		return slot->idx - 1;
	funcs = array__grow(e->funcs, &e->cap_funcs, e->nr_funcs + 1, sizeof(*e->funcs));
	if (!funcs)
		return -ENOMEM;
	e->funcs = funcs;
	e->funcs[e->nr_funcs] = key;
	htab__insert(&e->func_ht, slot, h, e->nr_funcs);
	return e->nr_funcs++;
}

static bool enc_loc__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct enc *e = ctx;
	const struct frame *f = key;

	return e->locs[idx].dso == f->dso && e->locs[idx].addr == f->addr;
}

/*
 * Returns the index of the location of f, or a negative errno. Symbolizing is by far the most
 * expensive step, so it happens here, once per distinct frame rather than once per row.
 */
int64_t enc__location(struct enc *e, const struct frame *f)
{
	uint64_t h = hash__u64(hash__u64((uintptr_t)f->dso) ^ f->addr);
	struct enc_line *lines;
	struct enc_loc *locs, *loc;
	struct sym_frame sf;
	struct hslot *slot;
	struct enc_map *m;
	int64_t mapping;
	uint32_t i, n;
	int err;

	if (htab__reserve(&e->loc_ht))
		return -ENOMEM;
	slot = htab__find(&e->loc_ht, h, enc_loc__eq, e, f);
	if (slot->idx)
		return slot->idx - 1;

	mapping = enc__mapping(e, f->dso);
	if (mapping < 0)
		return mapping;
	memset(&sf, 0, sizeof(sf));
	err = symbolizer__frame(e->sym, f, e->st, &sf);
	if (err)
		return err;
	n = sf.nr_lines < SYM_MAX_LINES ? sf.nr_lines : SYM_MAX_LINES;

	locs = array__grow(e->locs, &e->cap_locs, e->nr_locs + 1, sizeof(*e->locs));
	if (!locs)
		return -ENOMEM;
	e->locs = locs;
	lines = array__grow(e->lines, &e->cap_lines, e->nr_lines + n, sizeof(*e->lines));
	if (!lines)
		return -ENOMEM;
	e->lines = lines;

	m = mapping ? &e->maps[mapping - 1] : NULL;
	for (i = 0; i < n; i++) {
		const struct sym_line *l = &sf.lines[i];
		int64_t fn = enc__function(e, l);

		if (fn < 0)
			return fn;
		e->lines[e->nr_lines + i].func = fn;
		e->lines[e->nr_lines + i].line = l->line;
		if (!m)
			continue;
		if (l->file)
			m->has_filenames = true;
		if (l->line)
			m->has_line_numbers = true;
	}
	if (m && n > 1)
		m->has_inline_frames = true;

	loc = &e->locs[e->nr_locs];
	loc->dso = f->dso;
	loc->addr = f->addr;
	loc->mapping = mapping;
	loc->first_line = e->nr_lines;
	loc->nr_lines = n;
	e->nr_lines += n;
	htab__insert(&e->loc_ht, slot, h, e->nr_locs);
	return e->nr_locs++;
}
