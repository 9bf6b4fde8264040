// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "pprof: " fmt

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/profile.pb-c.h"

#include "lib/hash.h"
#include "lib/hex.h"
#include "lib/log.h"
#include "lib/strtab.h"
#include "store/profiles.h"
#include "store/store.h"
#include "symbolize/symbolizer.h"
#include "export/intern.h"
#include "export/pprof.h"

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

enum {
	LABEL_PID,
	LABEL_TID,
	LABEL_COMM,
	LABEL_EXE,
	LABEL_SERVICE,
	LABEL_TRACE_ID,
	LABEL_SPAN_ID,
	LABEL_GPU,
	LABEL_API,
	NR_LABELS
};

/* trace_id and span_id, lower-case hex, are what Grafana Pyroscope links spans to profiles by. */
/* service_name: the OpenTelemetry service.name, as Pyroscope names it. */
/* gpu and api: GPU memory's device ordinal and CUDA API (store/profiles.h). */
static const char *const label_names[NR_LABELS] = {
	"pid", "tid", "comm", "exe", "service_name", "trace_id", "span_id", "gpu", "api",
};


/* A probe's captured values (store_row.args), each labelled arg.NAME. */
#define MAX_ARG_LABELS 4
#define LABELS_PER_ROW (NR_LABELS + MAX_ARG_LABELS)

/* The "name=value" lines of args as labels arg.NAME=value after s's others, in labels. */
static int arg_labels(struct enc *e, const char *args, Perftools__Profiles__Sample *s,
		      Perftools__Profiles__Label *labels)
{
	char key[160];

	for (const char *l = args; *l && s->n_label < LABELS_PER_ROW;) {
		const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l);
		const char *eq = memchr(l, '=', (size_t)(end - l));
		Perftools__Profiles__Label *lab = &labels[s->n_label];
		int64_t k, v;

		if (eq && (size_t)(eq - l) < sizeof(key) - 5) {
			snprintf(key, sizeof(key), "arg.%.*s", (int)(eq - l), l);
			k = enc__intern(e, key);
			v = enc__intern_n(e, eq + 1, (size_t)(end - eq - 1));
			if (k < 0 || v < 0)
				return -ENOMEM;
			perftools__profiles__label__init(lab);
			lab->key = k;
			lab->str = v;
			s->label[s->n_label++] = lab;
		}
		l = nl ? nl + 1 : end;
	}
	return 0;
}

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
	pb->labels = array__alloc(res->nr_rows * LABELS_PER_ROW, sizeof(*pb->labels));
	pb->labels_p = array__alloc(res->nr_rows * LABELS_PER_ROW, sizeof(*pb->labels_p));
	if (!pb->samples || !pb->samples_p || !pb->loc_ids || !pb->values || !pb->labels ||
	    !pb->labels_p)
		return -ENOMEM;

	for (r = 0; r < res->nr_rows; r++) {
		const struct store_row *row = &res->rows[r];
		Perftools__Profiles__Sample *s = &pb->samples[r];
		const char *strs[NR_LABELS];
		char pid[16], tid[16], trace_id[33], span_id[17], gpu[8];
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
		strs[LABEL_SERVICE] = row->service;
		strs[LABEL_TRACE_ID] = strs[LABEL_SPAN_ID] = NULL;
		if (row->trace_id) {
			hex__encode(row->trace_id, 16, trace_id);
			hex__encode(row->span_id, 8, span_id);
			strs[LABEL_TRACE_ID] = trace_id;
			strs[LABEL_SPAN_ID] = span_id;
		}
		strs[LABEL_GPU] = NULL;
		if (row->gpu) {
			snprintf(gpu, sizeof(gpu), "%u", row->gpu - 1u);
			strs[LABEL_GPU] = gpu;
		}
		strs[LABEL_API] = profile__gpu_api_name(row->gpu_api);
		s->label = &pb->labels_p[r * LABELS_PER_ROW];
		for (i = 0; i < NR_LABELS; i++) {
			Perftools__Profiles__Label *l = &pb->labels[r * LABELS_PER_ROW + s->n_label];
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
		if (row->args && row->args[0] && arg_labels(e, row->args, s, &pb->labels[r * LABELS_PER_ROW]))
			return -ENOMEM;
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
	const struct profile_desc *desc = profile__desc(res->type);
	/* The profile's default value: span time for off-CPU, the sample count for CPU. */
	unsigned int v = desc && desc->default_value >= 0 ? (unsigned int)desc->default_value : 0;
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
		err = folded__add(&fo, &line, res->rows[r].values[v]);
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
