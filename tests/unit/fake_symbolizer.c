// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strtab.h"
#include "symbolize/symbolizer.h"
#include "fake_symbolizer.h"

struct fake_line {
	uint64_t addr;
	char *function;
	char *system_name;
	char *file;
	uint32_t line;
};

struct dso {
	enum dso_kind kind;
	char *path;
	char *build_id;
	uint32_t id;
	int refcnt;
	struct fake_line *lines;
	size_t nr_lines;
};

static uint32_t fake_next_id = 1;
static unsigned long fake_calls;
static unsigned long fake_live;
static long fake_fail_after = -1;

struct dso *fake_dso__new(enum dso_kind kind, const char *path, const char *build_id)
{
	struct dso *dso = calloc(1, sizeof(*dso));

	if (!dso)
		return NULL;
	dso->kind = kind;
	dso->path = strdup(path);
	dso->build_id = strdup(build_id ? build_id : "");
	if (!dso->path || !dso->build_id) {
		free(dso->path);
		free(dso->build_id);
		free(dso);
		return NULL;
	}
	dso->id = fake_next_id++;
	dso->refcnt = 1;
	fake_live++;
	return dso;
}

int fake_dso__add_line(struct dso *dso, uint64_t addr, const char *function,
		       const char *system_name, const char *file, uint32_t line)
{
	struct fake_line *lines = realloc(dso->lines, (dso->nr_lines + 1) * sizeof(*lines));
	struct fake_line *l;

	if (!lines)
		return -ENOMEM;
	dso->lines = lines;
	l = &lines[dso->nr_lines];
	l->addr = addr;
	l->function = strdup(function);
	l->system_name = strdup(system_name ? system_name : function);
	l->file = strdup(file ? file : "");
	l->line = line;
	if (!l->function || !l->system_name || !l->file) {
		free(l->function);
		free(l->system_name);
		free(l->file);
		return -ENOMEM;
	}
	dso->nr_lines++;
	return 0;
}

unsigned long fake_symbolizer__calls(void)
{
	return fake_calls;
}

void fake_symbolizer__fail_after(long n)
{
	fake_fail_after = n;
}

unsigned long fake_dso__live(void)
{
	return fake_live;
}

enum dso_kind dso__kind(const struct dso *dso)
{
	return dso->kind;
}

const char *dso__path(const struct dso *dso)
{
	return dso->path;
}

const char *dso__build_id(const struct dso *dso)
{
	return dso->build_id;
}

uint32_t dso__id(const struct dso *dso)
{
	return dso->id;
}

struct dso *dso__get(struct dso *dso)
{
	if (dso)
		dso->refcnt++;
	return dso;
}

void dso__put(struct dso *dso)
{
	if (!dso || --dso->refcnt > 0)
		return;
	for (size_t i = 0; i < dso->nr_lines; i++) {
		free(dso->lines[i].function);
		free(dso->lines[i].system_name);
		free(dso->lines[i].file);
	}
	free(dso->lines);
	free(dso->path);
	free(dso->build_id);
	free(dso);
	fake_live--;
}

static int fake__intern(struct strtab *st, const char *s, uint32_t *out)
{
	int64_t idx = strtab__intern(st, s);

	if (idx < 0)
		return (int)idx;
	*out = (uint32_t)idx;
	return 0;
}

int symbolizer__frame(struct symbolizer *sym, const struct frame *f, struct strtab *st,
		      struct sym_frame *out)
{
	const char *base;
	char name[512];
	size_t i;
	int err;

	(void)sym;
	fake_calls++;
	if (fake_fail_after == 0)
		return -ENOMEM;
	if (fake_fail_after > 0)
		fake_fail_after--;
	memset(out, 0, sizeof(*out));
	for (i = 0; f->dso && i < f->dso->nr_lines && out->nr_lines < SYM_MAX_LINES; i++) {
		const struct fake_line *l = &f->dso->lines[i];
		struct sym_line *sl = &out->lines[out->nr_lines];

		if (l->addr != f->addr)
			continue;
		err = fake__intern(st, l->function, &sl->function);
		err = err ?: fake__intern(st, l->system_name, &sl->system_name);
		err = err ?: fake__intern(st, l->file, &sl->file);
		if (err)
			return err;
		sl->line = l->line;
		out->nr_lines++;
	}
	if (out->nr_lines) {
		out->resolved = 1;
		return 0;
	}

	if (f->dso) {
		base = strrchr(f->dso->path, '/');
		base = base ? base + 1 : f->dso->path;
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, base, f->addr);
	} else {
		snprintf(name, sizeof(name), "0x%" PRIx64, f->addr);
	}
	err = fake__intern(st, name, &out->lines[0].function);
	err = err ?: fake__intern(st, name, &out->lines[0].system_name);
	if (err)
		return err;
	out->nr_lines = 1;
	return 0;
}
