/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_EXPORT_INTERN_H
#define AUTOPROF_EXPORT_INTERN_H

/*
 * What the profile encoders (pprof, folded, OTLP) share: a small open-addressing hash table, and
 * the pass that symbolizes every distinct frame once and deduplicates its locations, functions
 * and mappings into dense tables. Internal to src/export.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/array.h"
#include "symbolize/frame.h"
#include "symbolize/symbolizer.h"

struct dso;
struct strtab;

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

/* Makes room for one more entry, keeping the load factor at most 1/2. 0 or -ENOMEM. */
int htab__reserve(struct htab *t);
/*
 * Returns the slot holding key, or the empty slot where it belongs. The table must have been
 * reserved so that an empty slot exists.
 */
struct hslot *htab__find(struct htab *t, uint64_t hash, htab_eq_fn eq, const void *ctx,
			 const void *key);
void htab__insert(struct htab *t, struct hslot *slot, uint64_t hash, uint32_t idx);
void htab__free(struct htab *t);


struct enc_loc {
	struct dso *dso;
	uint64_t addr;
	uint32_t mapping;	/* mapping index + 1, 0 = none */
	uint32_t first_line;	/* into enc.lines; inlined callees first, as symbolized */
	uint32_t nr_lines;
};

struct enc_line {
	uint32_t func;	/* index into enc.funcs */
	uint32_t line;
};

/* Strings are indices into enc.st. */
struct enc_func {
	uint32_t name;
	uint32_t system_name;
	uint32_t file;
};

struct enc_map {
	struct dso *dso;
	uint32_t filename;
	uint32_t build_id;	/* 0 ("") when the object has none */
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
};

/* Every distinct frame symbolized once, functions and dsos deduplicated, in first-seen order. */
struct enc {
	struct symbolizer *sym;
	struct strtab *st;	/* "" at 0; also holds the encoder's own strings */
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

/* 0 or -ENOMEM. sym is handed to symbolizer__frame as is. */
int enc__init(struct enc *e, struct symbolizer *sym);
void enc__exit(struct enc *e);
/* Returns the string's index in e->st, or -ENOMEM. */
int64_t enc__intern(struct enc *e, const char *s);
/* The same of the n bytes at s. */
int64_t enc__intern_n(struct enc *e, const char *s, size_t n);
/*
 * Returns the index into e->locs of the location of f, symbolizing it (and adding its functions
 * and mapping) the first time f is seen, or a negative errno.
 */
int64_t enc__location(struct enc *e, const struct frame *f);

#endif
