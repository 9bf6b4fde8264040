// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "dwarf: " fmt

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/log.h"
#include "lib/strtab.h"
#include "lib/timeconst.h"
#include "symbolize/dwarf_priv.h"

int range_vec__add(struct range_vec *rv, uint64_t lo, uint64_t hi, size_t idx)
{
	if (lo >= hi)
		return 0;
	if (rv->nr == rv->cap) {
		size_t cap = rv->cap ? 2 * rv->cap : 16;
		struct addr_range *v = realloc(rv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rv->v = v;
		rv->cap = cap;
	}
	rv->v[rv->nr++] = (struct addr_range){.lo = lo, .hi = hi, .idx = idx};
	return 0;
}

static int addr_range__cmp(const void *a, const void *b)
{
	const struct addr_range *ra = a, *rb = b;

	if (ra->lo != rb->lo)
		return ra->lo < rb->lo ? -1 : 1;
	/* Among equal starts the narrower (more specific) range goes last, where the search
	 * looks first. */
	if (ra->hi != rb->hi)
		return ra->hi > rb->hi ? -1 : 1;
	return 0;
}

void range_vec__sort(struct range_vec *rv)
{
	uint64_t max_hi = 0;

	/* A file without ranges has no array at all: qsort must not be given NULL. */
	if (!rv->nr)
		return;
	qsort(rv->v, rv->nr, sizeof(*rv->v), addr_range__cmp);
	for (size_t i = 0; i < rv->nr; i++) {
		if (rv->v[i].hi > max_hi)
			max_hi = rv->v[i].hi;
		rv->v[i].max_hi = max_hi;
	}
}

/* The latest-starting range containing addr, or NULL. O(log n) unless ranges overlap. */
const struct addr_range *range_vec__find(const struct range_vec *rv, uint64_t addr)
{
	size_t lo = 0, hi = rv->nr;

	/* first range starting after addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rv->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && rv->v[lo].max_hi > addr) {
		if (addr < rv->v[lo].hi)
			return &rv->v[lo];
	}
	return NULL;
}

size_t range_vec__bytes(const struct range_vec *rv)
{
	return rv->cap * sizeof(*rv->v);
}

/* Adds every code range of die to rv. A DIE without code simply has none. */
int range_vec__add_die(struct range_vec *rv, Dwarf_Die *die, size_t idx)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int err;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		err = range_vec__add(rv, start, end, idx);
		if (err)
			return err;
	}
	return 0;
}

/* ---- copying a CU out of libdw ------------------------------------------------------------- */

static uint32_t dwarf_info__intern(struct dwarf_info *di, const char *s)
{
	int64_t id;

	if (!s || !*s)
		return 0;
	id = strtab__intern(di->strs, s);
	if (id < 0)
		return 0; /* out of memory: the name is left out, the lookup still answers */
	if ((uint32_t)id + 1 == strtab__count(di->strs))
		di->bytes += strlen(s) + 1 + 3 * sizeof(void *);
	return (uint32_t)id;
}

static const char *dwarf_info__str(const struct dwarf_info *di, uint32_t id)
{
	return id ? strtab__str(di->strs, id) : NULL;
}

static uint64_t ptr__hash(const void *a, const void *b)
{
	uint64_t h = (uintptr_t)a * 0x9e3779b97f4a7c15ull ^ (uintptr_t)b * 0xc2b2ae3d27d4eb4full;

	return h ^ (h >> 29);
}

static int dwarf_info__grow_paths(struct dwarf_info *di)
{
	size_t cap = di->paths_cap ? 2 * di->paths_cap : 16;
	struct path_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < di->paths_cap; i++) {
		struct path_slot *old = &di->paths[i];
		size_t j;

		if (!old->joined)
			continue;
		for (j = ptr__hash(old->name, old->comp_dir) & (cap - 1); slots[j].joined;
		     j = (j + 1) & (cap - 1))
			;
		slots[j] = *old;
	}
	free(di->paths);
	di->bytes += (cap - di->paths_cap) * sizeof(*slots);
	di->paths = slots;
	di->paths_cap = cap;
	return 0;
}

/* name joined with the comp_dir of cudie when it is relative, interned; name itself when
 * anything fails. */
static uint32_t dwarf_info__path(struct dwarf_info *di, Dwarf_Die *cudie, const char *name)
{
	Dwarf_Attribute attr;
	const char *comp_dir;
	struct path_slot *slot;
	char *joined;
	size_t i;

	if (!name || name[0] == '/')
		return dwarf_info__intern(di, name);
	comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	if (!comp_dir || !*comp_dir)
		return dwarf_info__intern(di, name);
	/* Both strings live in libdw's tables or the file's sections, fixed until dwarf_end, so
	 * their addresses identify the pair. */
	if (2 * (di->nr_paths + 1) > di->paths_cap && dwarf_info__grow_paths(di))
		return dwarf_info__intern(di, name);
	for (i = ptr__hash(name, comp_dir) & (di->paths_cap - 1); di->paths[i].joined;
	     i = (i + 1) & (di->paths_cap - 1)) {
		if (di->paths[i].name == name && di->paths[i].comp_dir == comp_dir)
			return di->paths[i].joined;
	}
	if (asprintf(&joined, "%s/%s", comp_dir, name) < 0)
		return dwarf_info__intern(di, name);
	slot = &di->paths[i];
	slot->joined = dwarf_info__intern(di, joined);
	free(joined);
	if (!slot->joined)
		return dwarf_info__intern(di, name);
	slot->name = name;
	slot->comp_dir = comp_dir;
	di->nr_paths++;
	return slot->joined;
}

static const char *die__function_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	/* _integrate follows DW_AT_abstract_origin and DW_AT_specification: inlined instances
	 * and out-of-line member definitions name themselves only there. */
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

static bool die__is_scope(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return true;
	default:
		return false;
	}
}

struct cu_walk {
	struct dwarf_info *di;
	struct dwarf_cu *cu;
	Dwarf_Die *cudie;
	Dwarf_Files *files;
	size_t nr_files;
};

/* An inlined subroutine's code ranges, appended to cu->ranges. */
static int cu_walk__ranges(struct cu_walk *w, Dwarf_Die *die, struct inl_node *n)
{
	struct dwarf_cu *cu = w->cu;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	n->first_range = cu->nr_ranges;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (start >= end)
			continue;
		if (array__reserve((void **)&cu->ranges, &cu->cap_ranges, cu->nr_ranges + 1ull,
				   sizeof(*cu->ranges)))
			return -ENOMEM;
		cu->ranges[cu->nr_ranges++] = (struct pc_range){start, end};
	}
	n->nr_ranges = cu->nr_ranges - n->first_range;
	return 0;
}

/*
 * Appends the inlined subroutines below scope (in DIE order) to cu->nodes, their parent the
 * nearest enclosing one. Blocks are descended through but not recorded: they are no frames.
 */
static int cu_walk__inlines(struct cu_walk *w, Dwarf_Die *scope, int32_t parent, uint32_t first,
			    int depth)
{
	struct dwarf_cu *cu = w->cu;
	Dwarf_Die child;
	int ret, err;

	if (depth > DWARF_MAX_DEPTH)
		return 0;
	for (ret = dwarf_child(scope, &child); ret == 0; ret = dwarf_siblingof(&child, &child)) {
		Dwarf_Attribute attr;
		Dwarf_Word file, line;
		struct inl_node *n;
		int32_t me = parent;

		if (!die__is_scope(&child))
			continue;
		if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) {
			if (array__reserve((void **)&cu->nodes, &cu->cap_nodes, cu->nr_nodes + 1ull,
					   sizeof(*cu->nodes)))
				return -ENOMEM;
			me = (int32_t)(cu->nr_nodes - first);
			n = &cu->nodes[cu->nr_nodes++];
			*n = (struct inl_node){.parent = parent};
			n->name = dwarf_info__intern(w->di, die__function_name(&child));
			if (!dwarf_formudata(dwarf_attr(&child, DW_AT_call_line, &attr), &line))
				n->call_line = (uint32_t)line;
			if (!dwarf_formudata(dwarf_attr(&child, DW_AT_call_file, &attr), &file) &&
			    w->files && file < w->nr_files)
				n->call_file = dwarf_info__path(
				    w->di, w->cudie, dwarf_filesrc(w->files, file, NULL, NULL));
			err = cu_walk__ranges(w, &child, n);
			if (err)
				return err;
		}
		err = cu_walk__inlines(w, &child, me, first, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

static int cu_walk__add_func(struct cu_walk *w, Dwarf_Die *die)
{
	struct dwarf_cu *cu = w->cu;
	size_t before = cu->funcs.nr;
	struct func_ent *fn;
	int err;

	/* Room for the entry first, so that no range ever points past fns. */
	if (array__reserve((void **)&cu->fns, &cu->cap_fns, cu->nr_fns + 1ull, sizeof(*cu->fns)))
		return -ENOMEM;
	err = range_vec__add_die(&cu->funcs, die, cu->nr_fns);
	/* Declarations and abstract instances have no code of their own. */
	if (cu->funcs.nr == before)
		return err;
	fn = &cu->fns[cu->nr_fns++];
	*fn = (struct func_ent){.name = dwarf_info__intern(w->di, die__function_name(die)),
				.first_node = cu->nr_nodes};
	if (!err)
		err = cu_walk__inlines(w, die, -1, fn->first_node, 0);
	/* (cu->fns may have moved: nodes only, not functions, were added) */
	cu->fns[cu->nr_fns - 1].nr_nodes = cu->nr_nodes - cu->fns[cu->nr_fns - 1].first_node;
	return err;
}

/*
 * Collects the subprograms with code below parent. Namespaces and classes hold C++ definitions;
 * subprograms and blocks hold nested functions and the member functions of local classes
 * (lambdas). Inlined subroutines are instances of functions indexed elsewhere.
 */
static int cu_walk__funcs(struct cu_walk *w, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	int ret, err;

	if (depth > DWARF_MAX_DEPTH)
		return 0;
	ret = dwarf_child(parent, &child);
	while (ret == 0) {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			err = cu_walk__add_func(w, &child);
			if (err)
				return err;
			/* fallthrough */
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
		case DW_TAG_module:
		case DW_TAG_lexical_block:
			err = cu_walk__funcs(w, &child, depth + 1);
			if (err)
				return err;
			break;
		default:
			break;
		}
		ret = dwarf_siblingof(&child, &child);
	}
	/* A broken DIE ends the walk with what was found so far: lookups still name what they
	 * can. */
	if (ret < 0)
		pr_debug("walking CU at %#llx: %s\n", (unsigned long long)w->cu->off,
			 dwarf_errmsg(-1));
	return 0;
}

/*
 * The line table coded: each row from the one before it in its block (the first from its
 * block's mark, with line and file 0), as
 *   varint((off delta) << 2 | file changed << 1 | end_sequence), varint(zigzag(line delta)),
 *   varint(file) if it changed.
 * Most rows are 2 bytes: the next instruction a few bytes on, a line or two away, same file.
 */
static size_t put_uv(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	for (; v >= 0x80; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

static const uint8_t *get_uv(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t b = *p++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

/* Codes rows[0..n) into out (NULL: only counts) and their marks; returns the bytes. */
static size_t lines_code(const struct line_row *rows, size_t n, uint8_t *out,
			 struct line_mark *marks)
{
	struct line_row prev = {0};
	uint8_t scratch[32];
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		const struct line_row *r = &rows[i];
		uint8_t *p = out ? out + len : scratch;
		int64_t dline;
		bool new_file;
		size_t k;

		if (i % LINE_BLOCK == 0) {
			prev = (struct line_row){.off = r->off};
			if (marks)
				marks[i / LINE_BLOCK] = (struct line_mark){r->off, (uint32_t)len};
		}
		new_file = r->file != prev.file;
		dline = (int64_t)r->line - (int64_t)prev.line;
		k = put_uv(p, (uint64_t)(r->off - prev.off) << 2 | (uint64_t)new_file << 1 |
				  r->end_sequence);
		k += put_uv(p + k, (uint64_t)(dline << 1) ^ (uint64_t)(dline >> 63));
		if (new_file)
			k += put_uv(p + k, r->file);
		len += k;
		prev = *r;
	}
	return len;
}

/* Decodes the row after prev (its block's first when first) at *p; false when malformed. */
static bool line_next(const uint8_t **p, const uint8_t *end, struct line_row *prev)
{
	uint64_t h, zl, file;
	int64_t dline;

	*p = get_uv(*p, end, &h);
	if (!*p || !(*p = get_uv(*p, end, &zl)))
		return false;
	if (h & 2) {
		if (!(*p = get_uv(*p, end, &file)) || file > UINT32_MAX)
			return false;
		prev->file = (uint32_t)file;
	}
	dline = (int64_t)(zl >> 1) ^ -(int64_t)(zl & 1);
	prev->off += (uint32_t)(h >> 2);
	prev->line = (uint32_t)((int64_t)prev->line + dline) & 0x7fffffff;
	prev->end_sequence = h & 1;
	return true;
}

/* The CU's line table, with its files interned (a row's file is mostly the one before's). */
static int cu_walk__lines(struct cu_walk *w)
{
	struct dwarf_cu *cu = w->cu;
	const char *last_src = NULL;
	uint32_t last_file = 0;
	struct line_row *rows;
	Dwarf_Lines *lines;
	size_t nr, n = 0, len;
	int err = 0;

	if (dwarf_getsrclines(w->cudie, &lines, &nr) || !nr)
		return 0;
	rows = calloc(nr, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	/* libdw sorts the rows of all sequences by address: the first is the lowest. */
	if (dwarf_lineaddr(dwarf_onesrcline(lines, 0), &cu->rows_base))
		cu->rows_base = 0;
	for (size_t i = 0; i < nr; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct line_row *r = &rows[n];
		Dwarf_Addr addr;
		const char *src;
		bool end = false;
		int lineno = 0;
		uint32_t line;

		if (!l || dwarf_lineaddr(l, &addr))
			continue;
		if (addr < cu->rows_base || addr - cu->rows_base > UINT32_MAX ||
		    (n && addr - cu->rows_base < r[-1].off)) {
			/* Not sorted, or a CU over 4 GiB: malformed, its lines are left out. */
			goto out;
		}
		dwarf_lineendsequence(l, &end);
		src = dwarf_linesrc(l, NULL, NULL);
		if (src != last_src) {
			last_src = src;
			last_file = dwarf_info__path(w->di, w->cudie, src);
		}
		if (dwarf_lineno(l, &lineno) || lineno < 0)
			lineno = 0;
		line = (uint32_t)lineno & 0x7fffffff;
		/* A row saying what the row kept before it says (a new column, view or statement
		 * flag: a third of glibc's) changes no lookup's answer, the last row at or below
		 * an address: it is left out. */
		if (n && !end && !r[-1].end_sequence && r[-1].file == last_file &&
		    r[-1].line == line)
			continue;
		*r = (struct line_row){.off = (uint32_t)(addr - cu->rows_base),
				       .file = last_file,
				       .line = line,
				       .end_sequence = end};
		n++;
	}
	if (!n)
		goto out;
	len = lines_code(rows, n, NULL, NULL);
	cu->lines = malloc(len);
	cu->marks = malloc((n + LINE_BLOCK - 1) / LINE_BLOCK * sizeof(*cu->marks));
	if (!cu->lines || !cu->marks || len > UINT32_MAX) {
		free(cu->lines);
		free(cu->marks);
		cu->lines = NULL;
		cu->marks = NULL;
		err = len > UINT32_MAX ? 0 : -ENOMEM;
		goto out;
	}
	lines_code(rows, n, cu->lines, cu->marks);
	cu->lines_len = len;
	cu->nr_rows = n;
out:
	free(rows);
	return err;
}

/* Moves an array grown by the walk into di's kept memory at its exact size (most units hold a
 * few functions, and arrays doubled from 64 would hold ten times what they use). The array is
 * freed either way; false when out of memory. */
static bool keep(struct dwarf_info *di, void **p, size_t nr, size_t size)
{
	void *q = nr ? dwarf_info__keep(di, *p, nr * size) : NULL;

	free(*p);
	*p = q;
	return q || !nr;
}

/* The unit's arrays, kept; out of memory, it keeps nothing (its lookups find no function and no
 * line, as in a unit without DWARF), and what was kept of it waits for its dwarf_info. */
static void dwarf_cu__keep(struct dwarf_info *di, struct dwarf_cu *cu)
{
	size_t nr_marks = (cu->nr_rows + LINE_BLOCK - 1) / LINE_BLOCK;
	bool ok = keep(di, (void **)&cu->fns, cu->nr_fns, sizeof(*cu->fns));

	ok &= keep(di, (void **)&cu->nodes, cu->nr_nodes, sizeof(*cu->nodes));
	ok &= keep(di, (void **)&cu->ranges, cu->nr_ranges, sizeof(*cu->ranges));
	ok &= keep(di, (void **)&cu->funcs.v, cu->funcs.nr, sizeof(*cu->funcs.v));
	ok &= keep(di, (void **)&cu->lines, cu->lines_len, 1);
	ok &= keep(di, (void **)&cu->marks, nr_marks, sizeof(*cu->marks));
	if (!ok) {
		*cu = (struct dwarf_cu){.off = cu->off, .indexed = true};
		return;
	}
	cu->cap_fns = cu->nr_fns;
	cu->cap_nodes = cu->nr_nodes;
	cu->cap_ranges = cu->nr_ranges;
	cu->funcs.cap = cu->funcs.nr;
}

void dwarf_cu__index(struct dwarf_info *di, struct dwarf_cu *cu)
{
	Dwarf_Die cudie;
	struct cu_walk w = {di, cu, &cudie, NULL, 0};
	int err;

	cu->indexed = true;
	if (!dwarf_offdie(di->dw, cu->off, &cudie))
		return;
	if (dwarf_getsrcfiles(&cudie, &w.files, &w.nr_files))
		w.files = NULL;
	err = cu_walk__funcs(&w, &cudie, 0) ?: cu_walk__lines(&w);
	if (err)
		pr_debug("indexing CU at %#llx: %s\n", (unsigned long long)cu->off, strerror(-err));
	range_vec__sort(&cu->funcs);
	dwarf_cu__keep(di, cu);
	di->bytes += range_vec__bytes(&cu->funcs) + cu->cap_fns * sizeof(*cu->fns) +
		     cu->cap_nodes * sizeof(*cu->nodes) + cu->cap_ranges * sizeof(*cu->ranges) +
		     cu->lines_len +
		     (cu->nr_rows + LINE_BLOCK - 1) / LINE_BLOCK * sizeof(*cu->marks);
	/* libdw keeps the line table and the files it read for this CU while open */
	di->open_bytes += cu->nr_rows * LIBDW_LINE_BYTES + w.nr_files * LIBDW_FILE_BYTES;
	di->used_ns = now_ns();
	pr_debug("fd %d: CU at %#llx: %u functions, %u inlined, %zu rows\n", di->fd,
		 (unsigned long long)cu->off, cu->nr_fns, cu->nr_nodes, cu->nr_rows);
}

/* ---- lookups: the copies alone ------------------------------------------------------------- */

/* libdw's dwarf_getsrc_die: the last row at or below vaddr, unless it ends a sequence. Its
 * block is found by the marks, then decoded up to vaddr. */
static bool dwarf_cu__row(const struct dwarf_cu *cu, uint64_t vaddr, struct line_row *out)
{
	size_t l = 0, u, nr_marks = (cu->nr_rows + LINE_BLOCK - 1) / LINE_BLOCK, in_block;
	const uint8_t *p, *end;
	struct line_row r;
	uint64_t target;
	bool found = false;

	if (!cu->nr_rows || vaddr < cu->rows_base)
		return false;
	/* Every off is at most UINT32_MAX: an address past it is past them all. */
	target = vaddr - cu->rows_base > UINT32_MAX ? UINT32_MAX : vaddr - cu->rows_base;
	if (cu->marks[0].off > target)
		return false;
	u = nr_marks - 1;
	while (l < u) {
		size_t idx = u - (u - l) / 2;

		if (target < cu->marks[idx].off)
			u = idx - 1;
		else
			l = idx;
	}
	p = cu->lines + cu->marks[l].pos;
	end = l + 1 < nr_marks ? cu->lines + cu->marks[l + 1].pos : cu->lines + cu->lines_len;
	in_block = l + 1 < nr_marks ? LINE_BLOCK : cu->nr_rows - l * LINE_BLOCK;
	r = (struct line_row){.off = cu->marks[l].off};
	for (size_t i = 0; i < in_block && line_next(&p, end, &r) && r.off <= target; i++) {
		*out = r;
		found = true;
	}
	return found && !out->end_sequence;
}

static bool inl_node__has(const struct dwarf_cu *cu, const struct inl_node *n, uint64_t vaddr)
{
	for (uint32_t i = 0; i < n->nr_ranges; i++) {
		const struct pc_range *r = &cu->ranges[n->first_range + i];

		if (vaddr >= r->lo && vaddr < r->hi)
			return true;
	}
	return false;
}

/*
 * Fills chain with the inlined subroutines of fn containing vaddr, outermost first; returns how
 * many. At each depth the first in DIE order that holds vaddr is the one descended into.
 */
static size_t func_ent__chain(const struct dwarf_cu *cu, const struct func_ent *fn, uint64_t vaddr,
			      const struct inl_node **chain, size_t max)
{
	int32_t cur = -1;
	size_t nr = 0;

	for (uint32_t i = 0; i < fn->nr_nodes && nr < max; i++) {
		const struct inl_node *n = &cu->nodes[fn->first_node + i];

		if (n->parent == cur && inl_node__has(cu, n, vaddr)) {
			chain[nr++] = n;
			cur = (int32_t)i;
		}
	}
	return nr;
}

/* Copies the src frame lines into out, keeping the innermost and the real function when there
 * are more than fit. */
static void dwarf_frame__fill(struct dwarf_frame *out, const struct dwarf_line *lines, size_t nr)
{
	size_t keep = nr <= DWARF_MAX_INLINE ? nr : DWARF_MAX_INLINE - 1;

	memcpy(out->lines, lines, keep * sizeof(*lines));
	if (keep < nr)
		out->lines[keep++] = lines[nr - 1];
	out->nr = (uint32_t)keep;
}

void dwarf_cu__lookup(const struct dwarf_info *di, const struct dwarf_cu *cu, uint64_t vaddr,
		      struct dwarf_frame *out)
{
	const struct inl_node *chain[DWARF_MAX_DEPTH];
	struct dwarf_line lines[DWARF_MAX_DEPTH + 1];
	struct line_row row = {0};
	const struct addr_range *fr;
	const struct func_ent *fn;
	size_t nr_inl, i;

	/* The innermost position is the line table's row for vaddr itself. */
	lines[0] = (struct dwarf_line){0};
	if (dwarf_cu__row(cu, vaddr, &row)) {
		lines[0].file = dwarf_info__str(di, row.file);
		lines[0].line = row.line;
	}

	fr = range_vec__find(&cu->funcs, vaddr);
	if (!fr) {
		/* Line rows without a subprogram (assembly): the caller names the symbol. */
		out->lines[0] = lines[0];
		out->nr = 1;
		return;
	}
	fn = &cu->fns[fr->idx];
	nr_inl = func_ent__chain(cu, fn, vaddr, chain, DWARF_MAX_DEPTH);

	/*
	 * chain is outermost first: fn calls chain[0], which calls chain[1], ... Each frame is
	 * named for its function and placed at the call site of the next inner one.
	 */
	lines[0].function = dwarf_info__str(di, nr_inl ? chain[nr_inl - 1]->name : fn->name);
	for (i = 1; i <= nr_inl; i++) {
		size_t callee = nr_inl - i;

		lines[i].file = dwarf_info__str(di, chain[callee]->call_file);
		lines[i].line = chain[callee]->call_line;
		lines[i].function =
		    dwarf_info__str(di, callee ? chain[callee - 1]->name : fn->name);
	}
	dwarf_frame__fill(out, lines, nr_inl + 1);
}

void dwarf_info__forget_paths(struct dwarf_info *di)
{
	if (di->paths)
		memset(di->paths, 0, di->paths_cap * sizeof(*di->paths));
	di->nr_paths = 0;
}
