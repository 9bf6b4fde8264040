// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "pprof: " fmt

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/profile.pb-c.h"

#include "../lib/hash.h"
#include "../lib/log.h"
#include "../lib/strtab.h"
#include "../profiles.h"
#include "../store/store.h"
#include "../symbolize/dso.h"
#include "../symbolize/symbolizer.h"
#include "pprof.h"

/*
 * Open addressing over dense entry indices. The full hash is kept in the slot so that growing
 * needs no knowledge of the entries, and most mismatches are rejected without touching them.
 */
struct hslot {
	uint64_t hash;
	uint32_t idx;	/* entry index + 1, 0 = empty */
};

struct htab {
	struct hslot *slots;
	uint32_t mask;
	uint32_t nr;
};

typedef bool (*htab_eq_fn)(const void *ctx, uint32_t idx, const void *key);

/* Makes room for one more entry, keeping the load factor at most 1/2. */
static int htab__reserve(struct htab *t)
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
static struct hslot *htab__find(struct htab *t, uint64_t hash, htab_eq_fn eq, const void *ctx,
				const void *key)
{
	uint32_t i;

	for (i = hash & t->mask; t->slots[i].idx; i = (i + 1) & t->mask) {
		if (t->slots[i].hash == hash && eq(ctx, t->slots[i].idx - 1, key))
			return &t->slots[i];
	}
	return &t->slots[i];
}

static void htab__insert(struct htab *t, struct hslot *slot, uint64_t hash, uint32_t idx)
{
	slot->hash = hash;
	slot->idx = idx + 1;
	t->nr++;
}

static void htab__free(struct htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->mask = t->nr = 0;
}

/* Returns p grown to hold need elements of size, or NULL (p untouched) when out of memory. */
static void *array__grow(void *p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n;

	if (need <= *cap)
		return p;
	n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	p = realloc(p, (size_t)n * size);
	if (p)
		*cap = n;
	return p;
}

/* calloc that does not mistake an empty array for an allocation failure. */
static void *array__alloc(size_t nmemb, size_t size)
{
	return calloc(nmemb ? nmemb : 1, size);
}

struct enc_loc {
	struct dso *dso;
	uint64_t addr;
	uint32_t mapping;	/* mapping index + 1, 0 = none */
	uint32_t first_line;
	uint32_t nr_lines;
};

struct enc_line {
	uint32_t func;	/* index into enc.funcs */
	uint32_t line;
};

struct enc_func {
	uint32_t name;
	uint32_t system_name;
	uint32_t file;
};

struct enc_map {
	struct dso *dso;
	uint32_t filename;
	uint32_t build_id;
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
};

/* What both encoders share: every distinct frame symbolized once, functions and dsos deduped. */
struct enc {
	struct symbolizer *sym;
	struct strtab *st;
	struct enc_loc *locs;
	uint32_t nr_locs, cap_locs;
	struct htab loc_ht;
	struct enc_line *lines;
	uint32_t nr_lines, cap_lines;
	struct enc_func *funcs;
	uint32_t nr_funcs, cap_funcs;
	struct htab func_ht;
	struct enc_map *maps;
	uint32_t nr_maps, cap_maps;
	struct htab map_ht;
};

static int enc__init(struct enc *e, struct symbolizer *sym)
{
	memset(e, 0, sizeof(*e));
	e->sym = sym;
	e->st = strtab__new();
	return e->st ? 0 : -ENOMEM;
}

static void enc__exit(struct enc *e)
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

static int64_t enc__intern(struct enc *e, const char *s)
{
	return strtab__intern(e->st, s);
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
static int64_t enc__location(struct enc *e, const struct frame *f)
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

/* Every protobuf-c message of one profile, allocated as a handful of arrays. */
struct pb {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType period_type;
	Perftools__Profiles__ValueType *vt;
	Perftools__Profiles__ValueType **vt_p;
	Perftools__Profiles__Sample *samples;
	Perftools__Profiles__Sample **samples_p;
	uint64_t *loc_ids;
	int64_t *values;
	Perftools__Profiles__Label *labels;
	Perftools__Profiles__Label **labels_p;
	Perftools__Profiles__Location *locs;
	Perftools__Profiles__Location **locs_p;
	Perftools__Profiles__Line *lines;
	Perftools__Profiles__Line **lines_p;
	Perftools__Profiles__Function *funcs;
	Perftools__Profiles__Function **funcs_p;
	Perftools__Profiles__Mapping *maps;
	Perftools__Profiles__Mapping **maps_p;
};

static void pb__free(struct pb *pb)
{
	free(pb->vt);
	free(pb->vt_p);
	free(pb->samples);
	free(pb->samples_p);
	free(pb->loc_ids);
	free(pb->values);
	free(pb->labels);
	free(pb->labels_p);
	free(pb->locs);
	free(pb->locs_p);
	free(pb->lines);
	free(pb->lines_p);
	free(pb->funcs);
	free(pb->funcs_p);
	free(pb->maps);
	free(pb->maps_p);
}

enum { LABEL_PID, LABEL_TID, LABEL_COMM, LABEL_EXE, NR_LABELS };

static const char *const label_names[NR_LABELS] = { "pid", "tid", "comm", "exe" };

/* Fills the samples, symbolizing and deduplicating their frames into e on the way. */
static int pprof__samples(const struct store_result *res, unsigned int nr_values, struct enc *e,
			  struct pb *pb)
{
	int64_t keys[NR_LABELS];
	size_t r, total = 0, off = 0;
	unsigned int i;

	for (i = 0; i < NR_LABELS; i++) {
		keys[i] = enc__intern(e, label_names[i]);
		if (keys[i] < 0)
			return -ENOMEM;
	}
	for (r = 0; r < res->nr_rows; r++)
		total += res->rows[r].nr_frames;

	pb->samples = array__alloc(res->nr_rows, sizeof(*pb->samples));
	pb->samples_p = array__alloc(res->nr_rows, sizeof(*pb->samples_p));
	pb->loc_ids = array__alloc(total, sizeof(*pb->loc_ids));
	pb->values = array__alloc(res->nr_rows * nr_values, sizeof(*pb->values));
	pb->labels = array__alloc(res->nr_rows * NR_LABELS, sizeof(*pb->labels));
	pb->labels_p = array__alloc(res->nr_rows * NR_LABELS, sizeof(*pb->labels_p));
	if (!pb->samples || !pb->samples_p || !pb->loc_ids || !pb->values || !pb->labels ||
	    !pb->labels_p)
		return -ENOMEM;

	for (r = 0; r < res->nr_rows; r++) {
		const struct store_row *row = &res->rows[r];
		Perftools__Profiles__Sample *s = &pb->samples[r];
		const char *strs[NR_LABELS];
		char pid[16], tid[16];
		uint32_t j;

		perftools__profiles__sample__init(s);
		pb->samples_p[r] = s;
		s->location_id = &pb->loc_ids[off];
		s->n_location_id = row->nr_frames;
		for (j = 0; j < row->nr_frames; j++) {
			int64_t loc = enc__location(e, &row->frames[j]);

			if (loc < 0)
				return loc;
			pb->loc_ids[off + j] = loc + 1;
		}
		off += row->nr_frames;

		s->value = &pb->values[r * nr_values];
		s->n_value = nr_values;
		for (i = 0; i < nr_values; i++)
			s->value[i] = (int64_t)row->values[i];

		snprintf(pid, sizeof(pid), "%" PRIu32, row->pid);
		snprintf(tid, sizeof(tid), "%" PRIu32, row->tid);
		strs[LABEL_PID] = pid;
		strs[LABEL_TID] = tid;
		strs[LABEL_COMM] = row->comm;
		strs[LABEL_EXE] = row->exe;
		s->label = &pb->labels_p[r * NR_LABELS];
		for (i = 0; i < NR_LABELS; i++) {
			Perftools__Profiles__Label *l = &pb->labels[r * NR_LABELS + s->n_label];
			int64_t str;

			if (!strs[i] || !strs[i][0])
				continue;
			str = enc__intern(e, strs[i]);
			if (str < 0)
				return -ENOMEM;
			perftools__profiles__label__init(l);
			l->key = keys[i];
			l->str = str;
			s->label[s->n_label++] = l;
		}
	}
	pb->prof.sample = pb->samples_p;
	pb->prof.n_sample = res->nr_rows;
	return 0;
}

/* Turns the deduplicated locations, functions and mappings of e into messages. */
static int pprof__tables(const struct enc *e, struct pb *pb)
{
	uint32_t i;

	pb->locs = array__alloc(e->nr_locs, sizeof(*pb->locs));
	pb->locs_p = array__alloc(e->nr_locs, sizeof(*pb->locs_p));
	pb->lines = array__alloc(e->nr_lines, sizeof(*pb->lines));
	pb->lines_p = array__alloc(e->nr_lines, sizeof(*pb->lines_p));
	pb->funcs = array__alloc(e->nr_funcs, sizeof(*pb->funcs));
	pb->funcs_p = array__alloc(e->nr_funcs, sizeof(*pb->funcs_p));
	pb->maps = array__alloc(e->nr_maps, sizeof(*pb->maps));
	pb->maps_p = array__alloc(e->nr_maps, sizeof(*pb->maps_p));
	if (!pb->locs || !pb->locs_p || !pb->lines || !pb->lines_p || !pb->funcs || !pb->funcs_p ||
	    !pb->maps || !pb->maps_p)
		return -ENOMEM;

	for (i = 0; i < e->nr_lines; i++) {
		Perftools__Profiles__Line *l = &pb->lines[i];

		perftools__profiles__line__init(l);
		l->function_id = e->lines[i].func + 1;
		l->line = e->lines[i].line;
		pb->lines_p[i] = l;
	}
	for (i = 0; i < e->nr_locs; i++) {
		Perftools__Profiles__Location *l = &pb->locs[i];

		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->mapping_id = e->locs[i].mapping;
		l->address = e->locs[i].addr;
		l->line = &pb->lines_p[e->locs[i].first_line];
		l->n_line = e->locs[i].nr_lines;
		pb->locs_p[i] = l;
	}
	for (i = 0; i < e->nr_funcs; i++) {
		Perftools__Profiles__Function *f = &pb->funcs[i];

		perftools__profiles__function__init(f);
		f->id = i + 1;
		f->name = e->funcs[i].name;
		f->system_name = e->funcs[i].system_name;
		f->filename = e->funcs[i].file;
		pb->funcs_p[i] = f;
	}
	for (i = 0; i < e->nr_maps; i++) {
		Perftools__Profiles__Mapping *m = &pb->maps[i];

		perftools__profiles__mapping__init(m);
		m->id = i + 1;
		m->memory_start = 0;
		/*
		 * Frame addresses are file offsets, kernel or process virtual addresses (see
		 * frame.h), so only a mapping spanning everything contains them all.
		 */
		m->memory_limit = UINT64_MAX;
		m->file_offset = 0;
		m->filename = e->maps[i].filename;
		m->build_id = e->maps[i].build_id;
		m->has_functions = true;
		m->has_filenames = e->maps[i].has_filenames;
		m->has_line_numbers = e->maps[i].has_line_numbers;
		m->has_inline_frames = e->maps[i].has_inline_frames;
		pb->maps_p[i] = m;
	}
	pb->prof.location = pb->locs_p;
	pb->prof.n_location = e->nr_locs;
	pb->prof.function = pb->funcs_p;
	pb->prof.n_function = e->nr_funcs;
	pb->prof.mapping = pb->maps_p;
	pb->prof.n_mapping = e->nr_maps;
	return 0;
}

static int pprof__value_type(struct enc *e, const struct value_type *in,
			     Perftools__Profiles__ValueType *out)
{
	int64_t type = enc__intern(e, in->type), unit = enc__intern(e, in->unit);

	if (type < 0 || unit < 0)
		return -ENOMEM;
	perftools__profiles__value_type__init(out);
	out->type = type;
	out->unit = unit;
	return 0;
}

static int pprof__pack(const Perftools__Profiles__Profile *prof, struct buf *out)
{
	size_t len = perftools__profiles__profile__get_packed_size(prof);
	uint8_t *data = malloc(len ? len : 1);
	int err;

	if (!data)
		return -ENOMEM;
	perftools__profiles__profile__pack(prof, data);
	err = buf__gzip(data, len, out);
	free(data);
	return err;
}

int pprof__encode(const struct store_result *res, struct symbolizer *sym, struct buf *out)
{
	const struct profile_desc *desc = profile__desc(res->type);
	struct pb pb = { 0 };
	struct enc e;
	unsigned int i, nr_values;
	int err;

	if (!desc)
		return -EINVAL;
	nr_values = desc->nr_values;
	err = enc__init(&e, sym);
	if (err)
		return err;
	perftools__profiles__profile__init(&pb.prof);

	pb.vt = array__alloc(nr_values, sizeof(*pb.vt));
	pb.vt_p = array__alloc(nr_values, sizeof(*pb.vt_p));
	if (!pb.vt || !pb.vt_p) {
		err = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < nr_values; i++) {
		err = pprof__value_type(&e, &desc->values[i], &pb.vt[i]);
		if (err)
			goto out_free;
		pb.vt_p[i] = &pb.vt[i];
	}
	pb.prof.sample_type = pb.vt_p;
	pb.prof.n_sample_type = nr_values;
	err = pprof__value_type(&e, &desc->period_type, &pb.period_type);
	if (err)
		goto out_free;
	pb.prof.period_type = &pb.period_type;
	pb.prof.period = (int64_t)res->period;
	pb.prof.time_nanos = (int64_t)res->start_ns;
	pb.prof.duration_nanos = (int64_t)res->duration_ns;
	if (desc->default_value >= 0 && (unsigned int)desc->default_value < nr_values)
		pb.prof.default_sample_type = pb.vt[desc->default_value].type;

	err = pprof__samples(res, nr_values, &e, &pb);
	if (err)
		goto out_free;
	err = pprof__tables(&e, &pb);
	if (err)
		goto out_free;
	/* Only now is the string table complete: interning may move the array. */
	pb.prof.string_table = strtab__array(e.st);
	pb.prof.n_string_table = strtab__count(e.st);
	err = pprof__pack(&pb.prof, out);
out_free:
	/* The caller turns err into its own answer; this only helps when debugging. */
	if (err)
		pr_debug("encoding %zu rows failed: %s\n", res->nr_rows, strerror(-err));
	pb__free(&pb);
	enc__exit(&e);
	return err;
}

/* One distinct line of folded output; text lives in the arena at off, NUL-terminated. */
struct folded_stack {
	size_t off;
	size_t len;
	uint64_t count;
};

struct folded {
	struct buf arena;
	struct folded_stack *stacks;
	uint32_t nr, cap;
	struct htab ht;
};

struct folded_key {
	const char *text;
	size_t len;
};

static bool folded__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct folded *fo = ctx;
	const struct folded_stack *s = &fo->stacks[idx];
	const struct folded_key *k = key;

	return s->len == k->len && !memcmp(fo->arena.data + s->off, k->text, k->len);
}

/* Separators inside a name would split it into fake frames or fake lines. */
static int folded__put_name(struct buf *b, const char *name)
{
	size_t start = b->len, i;

	if (!name || !name[0])
		name = "[unknown]";
	if (buf__puts(b, name))
		return -ENOMEM;
	for (i = start; i < b->len; i++) {
		if (b->data[i] == ';' || b->data[i] == '\n' || b->data[i] == '\r')
			b->data[i] = '_';
	}
	return 0;
}

/* Appends the stack of row to line: exe first, then frames root first, callers before inlinees. */
static int folded__line(struct enc *e, const struct store_row *row, struct buf *line)
{
	uint32_t j;

	buf__reset(line);
	if (folded__put_name(line, row->exe))
		return -ENOMEM;
	for (j = row->nr_frames; j-- > 0;) {
		int64_t idx = enc__location(e, &row->frames[j]);
		const struct enc_loc *loc;
		uint32_t k;

		if (idx < 0)
			return idx;
		loc = &e->locs[idx];
		for (k = loc->nr_lines; k-- > 0;) {
			const struct enc_func *fn = &e->funcs[e->lines[loc->first_line + k].func];

			if (buf__append(line, ";", 1) ||
			    folded__put_name(line, strtab__str(e->st, fn->name)))
				return -ENOMEM;
		}
	}
	return 0;
}

static int folded__add(struct folded *fo, const struct buf *line, uint64_t count)
{
	struct folded_key key = { line->data, line->len };
	uint64_t h = hash__bytes(line->data, line->len, 0);
	struct folded_stack *stacks;
	struct hslot *slot;

	if (htab__reserve(&fo->ht))
		return -ENOMEM;
	slot = htab__find(&fo->ht, h, folded__eq, fo, &key);
	if (slot->idx) {
		fo->stacks[slot->idx - 1].count += count;
		return 0;
	}
	stacks = array__grow(fo->stacks, &fo->cap, fo->nr + 1, sizeof(*fo->stacks));
	if (!stacks)
		return -ENOMEM;
	fo->stacks = stacks;
	fo->stacks[fo->nr] = (struct folded_stack){ fo->arena.len, line->len, count };
	/* line->data is NUL-terminated: keep the NUL so the sort can use strcmp. */
	if (buf__append(&fo->arena, line->data, line->len + 1))
		return -ENOMEM;
	htab__insert(&fo->ht, slot, h, fo->nr);
	fo->nr++;
	return 0;
}

struct folded_out {
	const char *text;
	uint64_t count;
};

static int folded_out__cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_out *)a)->text, ((const struct folded_out *)b)->text);
}

int folded__encode(const struct store_result *res, struct symbolizer *sym, struct buf *out)
{
	struct folded fo = { 0 };
	struct folded_out *sorted = NULL;
	struct buf line = { 0 };
	struct enc e;
	uint32_t i;
	size_t r;
	int err;

	err = enc__init(&e, sym);
	if (err)
		return err;
	for (r = 0; r < res->nr_rows; r++) {
		err = folded__line(&e, &res->rows[r], &line);
		if (err)
			goto out_free;
		err = folded__add(&fo, &line, res->rows[r].values[0]);
		if (err)
			goto out_free;
	}

	/* Sorted so that the same data always gives the same text, whatever the row order. */
	sorted = array__alloc(fo.nr, sizeof(*sorted));
	if (!sorted) {
		err = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < fo.nr; i++) {
		sorted[i].text = fo.arena.data + fo.stacks[i].off;
		sorted[i].count = fo.stacks[i].count;
	}
	qsort(sorted, fo.nr, sizeof(*sorted), folded_out__cmp);
	for (i = 0; i < fo.nr; i++) {
		err = buf__printf(out, "%s %" PRIu64 "\n", sorted[i].text, sorted[i].count);
		if (err)
			goto out_free;
	}
out_free:
	if (err)
		pr_debug("folding %zu rows failed: %s\n", res->nr_rows, strerror(-err));
	free(sorted);
	free(fo.stacks);
	htab__free(&fo.ht);
	buf__free(&fo.arena);
	buf__free(&line);
	enc__exit(&e);
	return err;
}
