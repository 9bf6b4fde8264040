// SPDX-License-Identifier: GPL-2.0-only
/* One function's share of a profile by source line (linesum.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/strtab.h"
#include "export/intern.h"
#include "export/linesum.h"

/* A group as it is summed: the stamps count each row once per group and line. */
struct sum_group {
	uint32_t map, file, system_name; /* enc's mapping index + 1, strtab indices */
	bool outer;			 /* seen as the outermost function of a frame */
	uint32_t pid;
	uint64_t self, total;
	size_t stamp; /* row index + 1 of the last row counted into total */
	struct linesum_line *lines;
	size_t *stamps;
	uint32_t nr_lines, cap_lines, cap_stamps;
};

struct linesum {
	struct enc e;
	struct sum_group *groups;
	uint32_t nr_groups, cap_groups;
	struct linesum_group *out;
	uint8_t *match; /* per enc function: 0 not looked at yet, 1 the function, 2 another */
	uint32_t nr_match, cap_match;
	uint64_t profile_total;
};

/* name as the folded format writes it (pprof.c: folded__put_name) equals want. */
static bool folded_equal(const char *name, const char *want)
{
	if (!name[0])
		name = "[unknown]";
	for (; *name && *want; name++, want++) {
		char c = *name == ';' || *name == '\n' || *name == '\r' ? '_' : *name;

		if (c != *want)
			return false;
	}
	return !*name && !*want;
}

static bool is_match(struct linesum *ls, uint32_t func, const char *want)
{
	uint8_t *m = array__grow(ls->match, &ls->cap_match, ls->e.nr_funcs, 1);

	if (!m)
		return false; /* out of memory: counted as another function */
	ls->match = m;
	/* array__grow does not clear what it adds. */
	memset(m + ls->nr_match, 0, ls->e.nr_funcs - ls->nr_match);
	ls->nr_match = ls->e.nr_funcs;
	if (!m[func])
		m[func] = folded_equal(strtab__str(ls->e.st, ls->e.funcs[func].name), want) ? 1 : 2;
	return m[func] == 1;
}

static struct sum_group *find_group(struct linesum *ls, uint32_t map, const struct enc_func *fn)
{
	struct sum_group *g;

	for (uint32_t i = 0; i < ls->nr_groups; i++) {
		g = &ls->groups[i];
		if (g->map == map && g->file == fn->file && g->system_name == fn->system_name)
			return g;
	}
	g = array__grow(ls->groups, &ls->cap_groups, ls->nr_groups + 1, sizeof(*g));
	if (!g)
		return NULL;
	ls->groups = g;
	g = &ls->groups[ls->nr_groups++];
	memset(g, 0, sizeof(*g));
	g->map = map;
	g->file = fn->file;
	g->system_name = fn->system_name;
	return g;
}

static int add_line(struct sum_group *g, uint32_t line, uint64_t v, bool leaf, size_t stamp)
{
	uint32_t i;

	for (i = 0; i < g->nr_lines && g->lines[i].line != line; i++)
		;
	if (i == g->nr_lines) {
		struct linesum_line *l = array__grow(g->lines, &g->cap_lines, i + 1, sizeof(*l));
		size_t *s;

		if (!l)
			return -ENOMEM;
		g->lines = l;
		s = array__grow(g->stamps, &g->cap_stamps, i + 1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		g->stamps = s;
		g->lines[i] = (struct linesum_line){.line = line};
		g->stamps[i] = 0;
		g->nr_lines++;
	}
	if (leaf) {
		g->lines[i].self += v;
		g->self += v;
	}
	/* A recursive function's rows hold it several times: each row counts once. */
	if (g->stamps[i] != stamp) {
		g->stamps[i] = stamp;
		g->lines[i].total += v;
	}
	if (g->stamp != stamp) {
		g->stamp = stamp;
		g->total += v;
	}
	return 0;
}

static int sum_row(struct linesum *ls, const struct store_row *row, size_t stamp, uint64_t v,
		   const char *want)
{
	for (uint32_t j = 0; j < row->nr_frames; j++) {
		int64_t idx = enc__location(&ls->e, &row->frames[j]);
		const struct enc_loc *loc;

		if (idx < 0)
			return (int)idx;
		loc = &ls->e.locs[idx];
		/* Inlined callees first: the leaf's own code is its first line. */
		for (uint32_t k = 0; k < loc->nr_lines; k++) {
			const struct enc_line *l = &ls->e.lines[loc->first_line + k];
			struct sum_group *g;

			if (!is_match(ls, l->func, want))
				continue;
			g = find_group(ls, loc->mapping, &ls->e.funcs[l->func]);
			if (!g)
				return -ENOMEM;
			if (!g->pid)
				g->pid = row->pid;
			g->outer |= k == loc->nr_lines - 1;
			if (add_line(g, l->line, v, j == 0 && k == 0, stamp))
				return -ENOMEM;
		}
	}
	return 0;
}

static int by_line(const void *a, const void *b)
{
	const struct linesum_line *x = a, *y = b;

	return (x->line > y->line) - (x->line < y->line);
}

static int by_total_desc(const void *a, const void *b)
{
	const struct linesum_group *x = a, *y = b;

	return (x->total < y->total) - (x->total > y->total);
}

int linesum__function(const struct store_result *res, struct symbolizer *sym, const char *name,
		      unsigned int value_idx, struct linesum **out)
{
	struct linesum *ls = calloc(1, sizeof(*ls));
	int err;

	*out = NULL;
	if (!ls)
		return -ENOMEM;
	err = enc__init(&ls->e, sym);
	if (err) {
		free(ls);
		return err;
	}
	for (size_t r = 0; r < res->nr_rows; r++) {
		uint64_t v = value_idx < PROFILE_MAX_VALUES ? res->rows[r].values[value_idx] : 0;

		ls->profile_total += v;
		err = sum_row(ls, &res->rows[r], r + 1, v, name);
		if (err)
			goto fail;
	}
	ls->out = array__alloc(ls->nr_groups + 1, sizeof(*ls->out));
	if (!ls->out) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < ls->nr_groups; i++) {
		struct sum_group *g = &ls->groups[i];
		const struct enc_map *m = g->map ? &ls->e.maps[g->map - 1] : NULL;

		qsort(g->lines, g->nr_lines, sizeof(*g->lines), by_line);
		ls->out[i] = (struct linesum_group){
		    .binary = m ? strtab__str(ls->e.st, m->filename) : "",
		    .build_id = m ? strtab__str(ls->e.st, m->build_id) : "",
		    .file = strtab__str(ls->e.st, g->file),
		    .system_name = strtab__str(ls->e.st, g->system_name),
		    .pid = g->pid,
		    .inlined = !g->outer,
		    .self = g->self,
		    .total = g->total,
		    .lines = g->lines,
		    .nr_lines = g->nr_lines,
		};
	}
	qsort(ls->out, ls->nr_groups, sizeof(*ls->out), by_total_desc);
	*out = ls;
	return 0;
fail:
	linesum__free(ls);
	return err;
}

void linesum__free(struct linesum *ls)
{
	if (!ls)
		return;
	for (size_t i = 0; i < ls->nr_groups; i++) {
		free(ls->groups[i].lines);
		free(ls->groups[i].stamps);
	}
	free(ls->groups);
	free(ls->out);
	free(ls->match);
	enc__exit(&ls->e);
	free(ls);
}

const struct linesum_group *linesum__groups(const struct linesum *ls, size_t *nr)
{
	*nr = ls->nr_groups;
	return ls->out;
}

uint64_t linesum__profile_total(const struct linesum *ls)
{
	return ls->profile_total;
}
