// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "perfmap: " fmt

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/ufile.h"
#include "symbolize/perfmap.h"

/* A runaway JIT must not make the daemon read or hold without bound. */
#define PERF_MAP_MAX_ENTRIES 1000000u
#define PERF_MAP_MAX_BYTES   (256ull << 20)
/* Longer lines are skipped: V8's longest names (a function and its file) stay far below. */
#define PERF_MAP_MAX_LINE    (64u << 10)

/* One line as read; its position in the file is its index, which decides overlaps. */
struct pm_entry {
	uint64_t start;
	uint64_t end;
	uint32_t name; /* offset into the names read so far */
};

/* A range of addresses with a single owner once overlaps are resolved. */
struct pm_range {
	uint64_t start;
	uint64_t end;
	uint64_t sym_start; /* start of the owning entry, which may begin before this range */
	uint32_t name;	    /* offset into perf_map.names */
};

struct perf_map {
	struct pm_range *ranges;
	size_t nr_ranges;
	char *names;
	size_t names_size;
};

struct pm_builder {
	struct pm_entry *entries;
	size_t nr, alloc;
	char *names;
	size_t names_len, names_alloc;
};

/* Strict hex: optional 0x, 1 to 16 digits, nothing else (strtoull would take signs and spaces). */
static const char *hex__parse(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (;; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits == 16)
			return NULL;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return NULL;
	*out = v;
	return s;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static int pm_builder__add_name(struct pm_builder *b, const char *name, size_t len, uint32_t *off)
{
	if (b->names_alloc - b->names_len < len + 1) {
		size_t alloc = b->names_alloc ? b->names_alloc : 64 * 1024;
		char *names;

		while (alloc - b->names_len < len + 1)
			alloc *= 2;
		names = realloc(b->names, alloc);
		if (!names)
			return -ENOMEM;
		b->names = names;
		b->names_alloc = alloc;
	}
	memcpy(b->names + b->names_len, name, len);
	b->names[b->names_len + len] = '\0';
	*off = (uint32_t)b->names_len;
	b->names_len += len + 1;
	return 0;
}

/* Returns 1 when the line held an entry, 0 when it was skipped, or a negative errno. */
static int pm_builder__parse_line(struct pm_builder *b, char *line, size_t len)
{
	uint64_t start, size;
	const char *p = line;
	struct pm_entry *e;
	size_t name_len;
	int err;

	while (blank(*p))
		p++;
	p = hex__parse(p, &start);
	if (!p || !blank(*p))
		return 0;
	while (blank(*p))
		p++;
	p = hex__parse(p, &size);
	if (!p || !blank(*p))
		return 0;
	while (blank(*p))
		p++;
	/* The name is the rest of the line, spaces included ("LazyCompile:~f /app/x.js:3:10"). */
	name_len = len - (size_t)(p - line);
	while (name_len && (p[name_len - 1] == '\n' || p[name_len - 1] == '\r'))
		name_len--;
	if (!name_len || memchr(p, '\0', name_len) || !size || size > UINT64_MAX - start)
		return 0;
	if (b->nr == b->alloc) {
		size_t alloc = b->alloc ? 2 * b->alloc : 1024;

		e = realloc(b->entries, alloc * sizeof(*e));
		if (!e)
			return -ENOMEM;
		b->entries = e;
		b->alloc = alloc;
	}
	e = &b->entries[b->nr];
	err = pm_builder__add_name(b, p, name_len, &e->name);
	if (err)
		return err;
	e->start = start;
	e->end = start + size;
	b->nr++;
	return 1;
}

/*
 * Reads fd up to limit bytes, a line at a time through a buffer of PERF_MAP_MAX_LINE bytes: a
 * line that does not fit is skipped to its newline and counted, so that a file with no newline
 * at all costs one buffer, not the file's size.
 */
static int pm_builder__read(struct pm_builder *b, int fd, uint64_t limit, const char *path)
{
	size_t have = 0; /* bytes of an unfinished line at the start of buf */
	uint64_t total = 0;
	bool skipping = false; /* inside a line too long: drop up to its newline */
	int err = 0;
	char *buf;

	buf = malloc(PERF_MAP_MAX_LINE);
	if (!buf)
		return -ENOMEM;
	while (total < limit && b->nr < PERF_MAP_MAX_ENTRIES) {
		size_t want = PERF_MAP_MAX_LINE - have, start = 0, len;
		char *nl;
		ssize_t n;

		if (want > limit - total)
			want = (size_t)(limit - total);
		n = read(fd, buf + have, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = ufile__read_failed(fd, (int64_t)limit);
			break;
		}
		if (!n) {
			/* Shorter than when it was opened: rewritten (HotSpot) or truncated. */
			ufile__count(UFILE_TRUNCATED);
			break;
		}
		total += (uint64_t)n;
		len = have + (size_t)n;
		while (start < len && (nl = memchr(buf + start, '\n', len - start))) {
			size_t line_len = (size_t)(nl - (buf + start)) + 1;

			/* The newline ends the line for the parser: no NUL needed. */
			if (!skipping)
				err = pm_builder__parse_line(b, buf + start, line_len);
			skipping = false;
			start += line_len;
			if (err < 0)
				goto out;
			err = 0;
			if (b->nr == PERF_MAP_MAX_ENTRIES) {
				pr_warn("%s: more than %u entries, ignoring the rest\n", path,
					PERF_MAP_MAX_ENTRIES);
				goto out;
			}
		}
		have = len - start;
		memmove(buf, buf + start, have);
		if (have == PERF_MAP_MAX_LINE) {
			if (!skipping)
				ufile__count(UFILE_OVERLONG_LINE);
			skipping = true;
			have = 0;
		}
	}
	/* What is left has no newline yet: the writer may be mid-line, it is not complete. */
out:
	free(buf);
	return err;
}

/* Entries in the order the sweep adds them: by start, then by position in the file. */
struct pm_order {
	uint64_t start;
	uint32_t idx;
};

static int pm_order__cmp(const void *pa, const void *pb)
{
	const struct pm_order *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int u64__cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* A max-heap of entry indices: the latest entry (highest index) on top. */
struct idx_heap {
	uint32_t *v;
	size_t nr;
};

static void idx_heap__push(struct idx_heap *h, uint32_t idx)
{
	size_t i = h->nr++;

	while (i && h->v[(i - 1) / 2] < idx) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = idx;
}

static void idx_heap__pop(struct idx_heap *h)
{
	uint32_t last = h->v[--h->nr];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->nr)
			break;
		if (c + 1 < h->nr && h->v[c + 1] > h->v[c])
			c++;
		if (h->v[c] <= last)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->nr)
		h->v[i] = last;
}

/*
 * Cuts the entries into disjoint ranges, each owned by the latest entry covering it: a sweep over
 * every start and end, with the entries covering the current point in a heap. Entries that
 * ended stay in the heap until they reach the top, where they are dropped.
 * ranges[].name temporarily holds the owning entry's index.
 */
static int pm_builder__resolve(struct pm_builder *b, struct pm_range **out, size_t *nr_out)
{
	size_t nr_bounds = 0, nr = 0, j = 0;
	struct pm_range *ranges = NULL;
	struct pm_order *order = NULL;
	uint32_t *heap_v = NULL;
	uint64_t *bounds = NULL;
	struct idx_heap heap;
	int err = -ENOMEM;

	order = malloc(b->nr * sizeof(*order));
	heap_v = malloc(b->nr * sizeof(*heap_v));
	bounds = malloc(2 * b->nr * sizeof(*bounds));
	/* Each distinct bound starts at most one range. */
	ranges = malloc(2 * b->nr * sizeof(*ranges));
	if (!order || !heap_v || !bounds || !ranges)
		goto out_free;
	for (size_t i = 0; i < b->nr; i++) {
		order[i] = (struct pm_order){.start = b->entries[i].start, .idx = (uint32_t)i};
		bounds[2 * i] = b->entries[i].start;
		bounds[2 * i + 1] = b->entries[i].end;
	}
	qsort(order, b->nr, sizeof(*order), pm_order__cmp);
	qsort(bounds, 2 * b->nr, sizeof(*bounds), u64__cmp);
	for (size_t i = 0; i < 2 * b->nr; i++) {
		if (!nr_bounds || bounds[i] != bounds[nr_bounds - 1])
			bounds[nr_bounds++] = bounds[i];
	}
	heap = (struct idx_heap){.v = heap_v};
	/* The last bound is the greatest end: nothing covers it. */
	for (size_t k = 0; k + 1 < nr_bounds; k++) {
		uint64_t at = bounds[k];
		uint32_t top;

		while (j < b->nr && order[j].start <= at)
			idx_heap__push(&heap, order[j++].idx);
		while (heap.nr && b->entries[heap.v[0]].end <= at)
			idx_heap__pop(&heap);
		if (!heap.nr)
			continue;
		top = heap.v[0];
		if (nr && ranges[nr - 1].name == top && ranges[nr - 1].end == at) {
			/* Still the same owner: an entry that began and ended inside it lost. */
			ranges[nr - 1].end = bounds[k + 1];
			continue;
		}
		ranges[nr++] = (struct pm_range){
		    .start = at,
		    .end = bounds[k + 1],
		    .sym_start = b->entries[top].start,
		    .name = top,
		};
	}
	*out = ranges;
	*nr_out = nr;
	ranges = NULL;
	err = 0;
out_free:
	free(ranges);
	free(bounds);
	free(heap_v);
	free(order);
	return err;
}

/* Keeps only the names of entries that own a range: overridden ones are dead code. */
static int perf_map__compact_names(struct perf_map *pm, const struct pm_builder *b)
{
	size_t len = 0, off = 0;
	uint32_t *new_off;
	int err = 0;

	new_off = malloc(b->nr * sizeof(*new_off));
	if (!new_off)
		return -ENOMEM;
	memset(new_off, 0xff, b->nr * sizeof(*new_off));
	for (size_t i = 0; i < pm->nr_ranges; i++) {
		uint32_t e = pm->ranges[i].name;

		if (new_off[e] == UINT32_MAX) {
			new_off[e] = 0;
			len += strlen(b->names + b->entries[e].name) + 1;
		}
	}
	pm->names = malloc(len ? len : 1);
	if (!pm->names) {
		err = -ENOMEM;
		goto out_free;
	}
	memset(new_off, 0xff, b->nr * sizeof(*new_off));
	for (size_t i = 0; i < pm->nr_ranges; i++) {
		uint32_t e = pm->ranges[i].name;

		if (new_off[e] == UINT32_MAX) {
			const char *name = b->names + b->entries[e].name;
			size_t n = strlen(name) + 1;

			memcpy(pm->names + off, name, n);
			new_off[e] = (uint32_t)off;
			off += n;
		}
		pm->ranges[i].name = new_off[e];
	}
	pm->names_size = len ? len : 1;
out_free:
	free(new_off);
	return err;
}

int perf_map__open(int rootfd, const char *name, uid_t owner, struct stat *st)
{
	/* Any size: only the first PERF_MAP_MAX_BYTES are read. */
	const struct ufile_how how = {
	    .flags = UFILE_F_NO_SYMLINKS | UFILE_F_OWNER,
	    .owner = owner,
	};

	return ufile__openat(rootfd, name, &how, st);
}

int perf_map__read(int fd, const char *name, const struct stat *st, struct perf_map **out)
{
	uint64_t limit = (uint64_t)st->st_size;
	struct pm_builder b = {0};
	struct perf_map *pm;
	int err;

	*out = NULL;
	if (limit > PERF_MAP_MAX_BYTES) {
		pr_warn("%s: more than %llu MiB, ignoring the rest\n", name,
			PERF_MAP_MAX_BYTES >> 20);
		ufile__count(UFILE_TOO_LARGE);
		limit = PERF_MAP_MAX_BYTES;
	}
	err = pm_builder__read(&b, fd, limit, name);
	if (err)
		goto out_free_builder;
	pm = calloc(1, sizeof(*pm));
	if (!pm) {
		err = -ENOMEM;
		goto out_free_builder;
	}
	if (b.nr) {
		err = pm_builder__resolve(&b, &pm->ranges, &pm->nr_ranges);
		if (err)
			goto out_free_map;
		err = perf_map__compact_names(pm, &b);
		if (err)
			goto out_free_map;
	}
	pr_debug("%s: %zu entries, %zu ranges\n", name, b.nr, pm->nr_ranges);
	*out = pm;
	goto out_free_builder;

out_free_map:
	perf_map__free(pm);
out_free_builder:
	free(b.entries);
	free(b.names);
	return err;
}

int perf_map__load_at(int rootfd, const char *name, uid_t owner, struct perf_map **out)
{
	struct stat st;
	int fd, err;

	*out = NULL;
	fd = perf_map__open(rootfd, name, owner, &st);
	if (fd < 0)
		return fd;
	err = perf_map__read(fd, name, &st, out);
	close(fd);
	return err;
}

int perf_map__load(const char *path, struct perf_map **out)
{
	int root = ufile__root(0), err;

	*out = NULL;
	if (root < 0)
		return root;
	err = perf_map__load_at(root, path, 0, out);
	close(root);
	return err;
}

void perf_map__free(struct perf_map *pm)
{
	if (!pm)
		return;
	free(pm->ranges);
	free(pm->names);
	free(pm);
}

const char *perf_map__lookup(const struct perf_map *pm, uint64_t addr, uint64_t *start)
{
	size_t lo = 0, hi;

	if (!pm || !pm->nr_ranges)
		return NULL;
	/* The first range starting after addr; the one before it may hold addr. */
	hi = pm->nr_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= pm->ranges[lo - 1].end)
		return NULL;
	if (start)
		*start = pm->ranges[lo - 1].sym_start;
	return pm->names + pm->ranges[lo - 1].name;
}

size_t perf_map__nr_ranges(const struct perf_map *pm)
{
	return pm ? pm->nr_ranges : 0;
}

size_t perf_map__bytes(const struct perf_map *pm)
{
	if (!pm)
		return 0;
	return sizeof(*pm) + pm->nr_ranges * sizeof(*pm->ranges) + pm->names_size;
}

/* V8's code kinds that name JavaScript functions with their source position. */
static const char *const v8_js_kinds[] = { "JS:", "LazyCompile:", "Function:", "Script:", "Eval:" };

static bool v8__split(const char *name, struct jit_name *out)
{
	const char *p = NULL, *loc, *colon, *end;
	char *num_end;
	unsigned long line;

	for (size_t i = 0; i < sizeof(v8_js_kinds) / sizeof(v8_js_kinds[0]); i++) {
		size_t len = strlen(v8_js_kinds[i]);

		if (!strncmp(name, v8_js_kinds[i], len)) {
			p = name + len;
			break;
		}
	}
	if (!p)
		return false;
	if (*p == '~' || *p == '^' || *p == '+' || *p == '*')
		p++;
	/* The position is the last word: "file:line:col", the file may hold colons (node:fs). */
	loc = strrchr(p, ' ');
	if (!loc)
		return false;
	end = loc + strlen(loc);
	colon = end;
	for (int i = 0; i < 2; i++) {
		do
			colon--;
		while (colon > loc && *colon != ':');
		if (colon == loc)
			return false;
	}
	line = strtoul(colon + 1, &num_end, 10);
	if (num_end == colon + 1 || *num_end != ':')
		return false;
	out->file = loc + 1;
	out->file_len = (size_t)(colon - out->file);
	out->line = line > UINT32_MAX ? 0 : (uint32_t)line;
	out->function = p;
	out->function_len = (size_t)(loc - p);
	if (!out->function_len) {
		out->function = "(anonymous)";
		out->function_len = strlen(out->function);
	}
	return true;
}

static bool hotspot__split(const char *name, struct jit_name *out)
{
	const char *paren = strchr(name, '('), *sp, *dot;
	size_t len = strlen(name);

	if (!paren || name[len - 1] != ')')
		return false;
	/* The return type, one word (generics and arrays have no spaces here), then the name. */
	for (sp = paren; sp > name && sp[-1] != ' '; sp--)
		;
	if (sp == name || memchr(name, ' ', (size_t)(sp - 1 - name)))
		return false;
	dot = memchr(sp, '.', (size_t)(paren - sp));
	if (!dot || dot == sp || paren[-1] == '.')
		return false;
	out->function = sp;
	out->function_len = (size_t)(paren - sp);
	return true;
}

void jit_name__split(const char *name, struct jit_name *out)
{
	*out = (struct jit_name){ .function = name, .function_len = strlen(name) };
	if (v8__split(name, out))
		return;
	*out = (struct jit_name){ .function = name, .function_len = strlen(name) };
	if (hotspot__split(name, out))
		return;
	*out = (struct jit_name){ .function = name, .function_len = strlen(name) };
}
