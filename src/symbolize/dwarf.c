// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "dwarf: " fmt

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "symbolize/dwarf.h"
#include "symbolize/elf.h"

/* Deeper nesting than this (scopes in scopes, or namespaces in classes) is malformed DWARF; the
 * limit keeps a hostile file from exhausting the stack of our recursive walk. */
#define DWARF_MAX_DEPTH 64

/* libdw's caches are not visible to us: rough per-item costs to account for them. */
#define LIBDW_CU_BYTES	 192
#define LIBDW_LINE_BYTES 64
#define LIBDW_FILE_BYTES 48

/*
 * A code range and what it belongs to (index into a CU or function table). Sorted by lo;
 * max_hi is the highest hi of this and all earlier ranges, which bounds the backwards scan when
 * ranges nest or overlap.
 */
struct addr_range {
	uint64_t lo;
	uint64_t hi;
	uint64_t max_hi;
	size_t idx;
};

struct range_vec {
	struct addr_range *v;
	size_t nr;
	size_t cap;
};

/*
 * One compilation unit. Its function table (every DW_TAG_subprogram with code, at any depth, so
 * namespaces, member functions and lambdas are covered) is built on the first lookup that lands
 * in it: most CUs of a big binary are never sampled.
 */
struct dwarf_cu {
	Dwarf_Die die;
	bool indexed;
	struct range_vec funcs; /* idx into func_dies */
	Dwarf_Die *func_dies;
	size_t nr_func_dies;
	size_t func_dies_cap;
};

/* A relative source path joined with its CU's comp_dir, keyed by libdw's two strings. */
struct path_slot {
	const char *name;
	const char *comp_dir;
	char *joined;
};

struct dwarf_info {
	Elf *elf;
	Dwarf *dw;
	struct dwarf_cu *cus; /* in .debug_info order, so sorted by DIE offset */
	size_t nr_cus;
	struct range_vec cu_ranges; /* idx into cus */
	struct path_slot *paths;
	size_t paths_cap;
	size_t nr_paths;
	size_t bytes;
};

static int range_vec__add(struct range_vec *rv, uint64_t lo, uint64_t hi, size_t idx)
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

static void range_vec__sort(struct range_vec *rv)
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
static const struct addr_range *range_vec__find(const struct range_vec *rv, uint64_t addr)
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

static size_t range_vec__bytes(const struct range_vec *rv)
{
	return rv->cap * sizeof(*rv->v);
}

/* Adds every code range of die to rv. A DIE without code simply has none. */
static int range_vec__add_die(struct range_vec *rv, Dwarf_Die *die, size_t idx)
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

/*
 * A stripped binary's debug file keeps the names but turns code into NOBITS; the binary itself
 * may keep an empty .debug_info after objcopy games.
 */
static bool has_debug_info(Elf *elf)
{
	static const char *const names[] = {".debug_info", ".zdebug_info"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		GElf_Shdr shdr;

		if (elf__section(elf, names[i], &shdr) && shdr.sh_type != SHT_NOBITS &&
		    shdr.sh_size > 0)
			return true;
	}
	return false;
}

/*
 * libdw (elfutils 0.188) reads the strings of .debug_str and .debug_line_str with strlen: in a
 * section whose last byte is not a NUL, the last string runs past its buffer (a fuzzed file did
 * that to dwarf_getsrclines). Such a file is malformed: its DWARF is not used. Compressed
 * sections are inflated by libdw itself, out of reach here.
 */
static bool strings_terminated(Elf *elf)
{
	static const char *const names[] = {".debug_str", ".debug_line_str"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		Elf_Scn *scn;
		GElf_Shdr shdr;
		Elf_Data *data;

		scn = elf__section(elf, names[i], &shdr);
		if (!scn || shdr.sh_type == SHT_NOBITS || !shdr.sh_size ||
		    (shdr.sh_flags & SHF_COMPRESSED))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !data->d_size ||
		    ((const char *)data->d_buf)[data->d_size - 1])
			return false;
	}
	return true;
}

/* Calls fn for each debug section with data in the file (".debug_x", or ".zdebug_x": the
 * older GNU compression), with its name past the prefix ("x"). */
static void debug_sections__each(
    Elf *elf, void (*fn)(Elf_Scn *scn, GElf_Shdr *shdr, const char *name, void *ctx), void *ctx)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && !strncmp(name, ".debug_", 7))
			fn(scn, &shdr, name + 1, ctx);
		else if (name && !strncmp(name, ".zdebug_", 8))
			fn(scn, &shdr, name + 2, ctx);
	}
}

static void add_bytes(Elf_Scn *scn, GElf_Shdr *shdr, const char *name, void *ctx)
{
	(void)scn;
	(void)name;
	*(size_t *)ctx += shdr->sh_size;
}

/*
 * The debug sections' bytes: the file is read with ELF_C_READ (never mapped: its owner could
 * truncate it under us, and a mapped page past the end is SIGBUS), so libdw holds each section
 * it reads in the heap for as long as the Dwarf lives; the cache budget must see them.
 */
static size_t debug_sections_bytes(Elf *elf)
{
	size_t bytes = 0;

	debug_sections__each(elf, add_bytes, &bytes);
	return bytes;
}

static void hide_if_unused(Elf_Scn *scn, GElf_Shdr *shdr, const char *name, void *ctx)
{
	static const char *const unused[] = {
	    "debug_loc",	  "debug_loclists",	"debug_macro", "debug_macinfo",
	    "debug_pubnames",	  "debug_pubtypes",	"debug_frame", "debug_names",
	    "debug_gnu_pubnames", "debug_gnu_pubtypes",
	};

	(void)ctx;
	for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
		if (!strcmp(name, unused[i])) {
			shdr->sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, shdr);
			return;
		}
	}
}

/*
 * Sections libdw would read (and inflate, when compressed) that no lookup here uses: locations
 * and macros are for debuggers, the name indexes and CFI for other tools. Marked SHT_NOBITS in
 * the in-memory headers (the file is not touched), libdw skips them: 1.4 MiB of glibc's
 * libc6-dbg file is its location lists.
 */
static void hide_unused_sections(Elf *elf)
{
	debug_sections__each(elf, hide_if_unused, NULL);
}

static int dwarf_info__add_cu(struct dwarf_info *di, Dwarf_Die *cudie, size_t *cus_cap)
{
	if (di->nr_cus == *cus_cap) {
		size_t cap = *cus_cap ? 2 * *cus_cap : 16;
		struct dwarf_cu *cus = realloc(di->cus, cap * sizeof(*cus));

		if (!cus)
			return -ENOMEM;
		di->cus = cus;
		*cus_cap = cap;
	}
	di->cus[di->nr_cus] = (struct dwarf_cu){.die = *cudie};
	/* A CU without ranges (data only, or a compiler that leaves them out) is still reachable
	 * through .debug_aranges in dwarf_info__find_cu. */
	return range_vec__add_die(&di->cu_ranges, cudie, di->nr_cus++);
}

static int dwarf_info__load_cus(struct dwarf_info *di)
{
	Dwarf_CU *cu = NULL, *next;
	size_t cus_cap = 0;
	int err;

	for (;;) {
		Dwarf_Die cudie, subdie;
		Dwarf_Half version;
		uint8_t unit_type;

		if (dwarf_get_units(di->dw, cu, &next, &version, &unit_type, &cudie, &subdie))
			break; /* 1: no more units; -1: a corrupt header ends what we can read */
		cu = next;
		/* Type units have no code; split-DWARF skeletons would need their .dwo. */
		if (unit_type != DW_UT_compile)
			continue;
		err = dwarf_info__add_cu(di, &cudie, &cus_cap);
		if (err)
			return err;
	}
	if (!di->nr_cus)
		return -ENODATA;
	range_vec__sort(&di->cu_ranges);
	di->bytes += cus_cap * sizeof(*di->cus) + range_vec__bytes(&di->cu_ranges) +
		     di->nr_cus * LIBDW_CU_BYTES;
	return 0;
}

int dwarf_info__open(int fd, struct dwarf_info **out)
{
	struct dwarf_info *di;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_warn("libelf: %s\n", elf_errmsg(-1));
		return -ENOTSUP;
	}
	di = calloc(1, sizeof(*di));
	if (!di)
		return -ENOMEM;
	di->bytes = sizeof(*di);
	di->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!di->elf || elf_kind(di->elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out_free;
	}
	/* Checked here rather than from dwarf_begin_elf's failure: libdw's error codes are not
	 * public, and "no DWARF" must be told apart from "broken DWARF". */
	if (!has_debug_info(di->elf)) {
		err = -ENODATA;
		goto out_free;
	}
	if (!strings_terminated(di->elf)) {
		err = -EINVAL;
		goto out_free;
	}
	hide_unused_sections(di->elf);
	di->dw = dwarf_begin_elf(di->elf, DWARF_C_READ, NULL);
	if (!di->dw) {
		pr_debug("dwarf_begin_elf: %s\n", dwarf_errmsg(-1));
		err = -EINVAL;
		goto out_free;
	}
	err = dwarf_info__load_cus(di);
	if (err)
		goto out_free;
	di->bytes += debug_sections_bytes(di->elf);
	*out = di;
	return 0;

out_free:
	dwarf_info__free(di);
	return err;
}

void dwarf_info__free(struct dwarf_info *di)
{
	if (!di)
		return;
	for (size_t i = 0; i < di->nr_cus; i++) {
		free(di->cus[i].funcs.v);
		free(di->cus[i].func_dies);
	}
	free(di->cus);
	free(di->cu_ranges.v);
	for (size_t i = 0; i < di->paths_cap; i++)
		free(di->paths[i].joined);
	free(di->paths);
	/* dwarf_begin_elf borrows the Elf: end the Dwarf first. */
	if (di->dw)
		dwarf_end(di->dw);
	if (di->elf)
		elf_end(di->elf);
	free(di);
}

size_t dwarf_info__bytes(const struct dwarf_info *di)
{
	return di ? di->bytes : 0;
}

static int dwarf_cu__add_func(struct dwarf_cu *cu, Dwarf_Die *die)
{
	size_t before = cu->funcs.nr;
	int err;

	/* Room for the DIE first, so that no range ever points past func_dies. */
	if (cu->nr_func_dies == cu->func_dies_cap) {
		size_t cap = cu->func_dies_cap ? 2 * cu->func_dies_cap : 16;
		Dwarf_Die *dies = realloc(cu->func_dies, cap * sizeof(*dies));

		if (!dies)
			return -ENOMEM;
		cu->func_dies = dies;
		cu->func_dies_cap = cap;
	}
	err = range_vec__add_die(&cu->funcs, die, cu->nr_func_dies);
	/* Declarations and abstract instances have no code of their own. */
	if (cu->funcs.nr != before)
		cu->func_dies[cu->nr_func_dies++] = *die;
	return err;
}

/*
 * Collects the subprograms with code below parent. Namespaces and classes hold C++ definitions;
 * subprograms and blocks hold nested functions and the member functions of local classes
 * (lambdas). Inlined subroutines are instances of functions indexed elsewhere.
 */
static int dwarf_cu__walk(struct dwarf_cu *cu, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	int ret, err;

	if (depth > DWARF_MAX_DEPTH)
		return 0;
	ret = dwarf_child(parent, &child);
	while (ret == 0) {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			err = dwarf_cu__add_func(cu, &child);
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
			err = dwarf_cu__walk(cu, &child, depth + 1);
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
		pr_debug("walking CU at %#llx: %s\n", (unsigned long long)dwarf_dieoffset(&cu->die),
			 dwarf_errmsg(-1));
	return 0;
}

static void dwarf_info__index_cu(struct dwarf_info *di, struct dwarf_cu *cu)
{
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nr;
	int err;

	cu->indexed = true;
	err = dwarf_cu__walk(cu, &cu->die, 0);
	if (err)
		pr_debug("indexing CU at %#llx: %s\n",
			 (unsigned long long)dwarf_dieoffset(&cu->die), strerror(-err));
	range_vec__sort(&cu->funcs);
	di->bytes += range_vec__bytes(&cu->funcs) + cu->func_dies_cap * sizeof(*cu->func_dies);
	/* Lookups in this CU make libdw read and keep its line table. */
	if (!dwarf_getsrclines(&cu->die, &lines, &nr))
		di->bytes += nr * LIBDW_LINE_BYTES;
	if (!dwarf_getsrcfiles(&cu->die, &files, &nr))
		di->bytes += nr * LIBDW_FILE_BYTES;
}

static int dwarf_cu__cmp_offset(const void *key, const void *elem)
{
	Dwarf_Off off = *(const Dwarf_Off *)key;
	Dwarf_Off cu_off = dwarf_dieoffset((Dwarf_Die *)&((const struct dwarf_cu *)elem)->die);

	return off < cu_off ? -1 : off > cu_off;
}

static struct dwarf_cu *dwarf_info__find_cu(struct dwarf_info *di, uint64_t vaddr)
{
	const struct addr_range *r = range_vec__find(&di->cu_ranges, vaddr);
	Dwarf_Die mem;
	Dwarf_Off off;

	if (r)
		return &di->cus[r->idx];
	/* .debug_aranges may know CUs that carry no ranges of their own. */
	if (!dwarf_addrdie(di->dw, vaddr, &mem))
		return NULL;
	off = dwarf_dieoffset(&mem);
	return bsearch(&off, di->cus, di->nr_cus, sizeof(*di->cus), dwarf_cu__cmp_offset);
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

/* name joined with the comp_dir of cudie when it is relative; name itself when anything fails. */
static const char *dwarf_info__path(struct dwarf_info *di, Dwarf_Die *cudie, const char *name)
{
	Dwarf_Attribute attr;
	const char *comp_dir;
	struct path_slot *slot;
	size_t i;

	if (!name || name[0] == '/')
		return name;
	comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	if (!comp_dir || !*comp_dir)
		return name;
	/* Both strings live in libdw's tables or the mapped file, fixed until dwarf_end, so
	 * their addresses identify the pair. */
	if (2 * (di->nr_paths + 1) > di->paths_cap && dwarf_info__grow_paths(di))
		return name;
	for (i = ptr__hash(name, comp_dir) & (di->paths_cap - 1); di->paths[i].joined;
	     i = (i + 1) & (di->paths_cap - 1)) {
		if (di->paths[i].name == name && di->paths[i].comp_dir == comp_dir)
			return di->paths[i].joined;
	}
	slot = &di->paths[i];
	if (asprintf(&slot->joined, "%s/%s", comp_dir, name) < 0) {
		slot->joined = NULL;
		return name;
	}
	slot->name = name;
	slot->comp_dir = comp_dir;
	di->nr_paths++;
	di->bytes += strlen(slot->joined) + 1;
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

/* The call site of an inlined subroutine, in the file table of the CU holding the DIE. */
static void dwarf_info__call_site(struct dwarf_info *di, Dwarf_Die *inl, struct dwarf_line *out)
{
	Dwarf_Attribute attr;
	Dwarf_Word file, line;
	Dwarf_Files *files;
	Dwarf_Die cudie;
	size_t nr_files;

	out->file = NULL;
	out->line = 0;
	if (!dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &line))
		out->line = (uint32_t)line;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &file) ||
	    !dwarf_diecu(inl, &cudie, NULL, NULL) || dwarf_getsrcfiles(&cudie, &files, &nr_files) ||
	    file >= nr_files)
		return;
	out->file = dwarf_info__path(di, &cudie, dwarf_filesrc(files, file, NULL, NULL));
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

/*
 * Fills chain with the inlined subroutines containing vaddr below func, outermost first; returns
 * how many. Blocks are descended through but not recorded: they are no frames.
 */
static size_t die__inline_chain(Dwarf_Die *func, uint64_t vaddr, Dwarf_Die *chain, size_t max)
{
	Dwarf_Die scope = *func, child;
	size_t nr = 0;
	int depth;

	for (depth = 0; depth < DWARF_MAX_DEPTH; depth++) {
		int ret = dwarf_child(&scope, &child);

		while (ret == 0 && !(die__is_scope(&child) && dwarf_haspc(&child, vaddr) > 0))
			ret = dwarf_siblingof(&child, &child);
		if (ret)
			break; /* no child scope holds vaddr: scope is the innermost */
		if (dwarf_tag(&child) == DW_TAG_inlined_subroutine && nr < max)
			chain[nr++] = child;
		scope = child;
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

int dwarf_info__lookup(struct dwarf_info *di, uint64_t vaddr, struct dwarf_frame *out)
{
	Dwarf_Die chain[DWARF_MAX_DEPTH];
	struct dwarf_line lines[DWARF_MAX_DEPTH + 1];
	const struct addr_range *fr;
	struct dwarf_cu *cu;
	Dwarf_Line *row;
	Dwarf_Die *func;
	size_t nr_inl, i;
	int lineno;

	cu = dwarf_info__find_cu(di, vaddr);
	if (!cu)
		return -ENOENT;
	if (!cu->indexed)
		dwarf_info__index_cu(di, cu);

	/* The innermost position is the line table's row for vaddr itself. */
	lines[0] = (struct dwarf_line){0};
	row = dwarf_getsrc_die(&cu->die, vaddr);
	if (row) {
		lines[0].file = dwarf_info__path(di, &cu->die, dwarf_linesrc(row, NULL, NULL));
		if (!dwarf_lineno(row, &lineno) && lineno > 0)
			lines[0].line = (uint32_t)lineno;
	}

	fr = range_vec__find(&cu->funcs, vaddr);
	if (!fr) {
		/* Line rows without a subprogram (assembly): the caller names the symbol. */
		out->lines[0] = lines[0];
		out->nr = 1;
		return 0;
	}
	func = &cu->func_dies[fr->idx];
	nr_inl = die__inline_chain(func, vaddr, chain, DWARF_MAX_DEPTH);

	/*
	 * chain is outermost first: func calls chain[0], which calls chain[1], ... Each frame
	 * is named for its function and placed at the call site of the next inner one.
	 */
	lines[0].function = die__function_name(nr_inl ? &chain[nr_inl - 1] : func);
	for (i = 1; i <= nr_inl; i++) {
		size_t callee = nr_inl - i;

		dwarf_info__call_site(di, &chain[callee], &lines[i]);
		lines[i].function = die__function_name(callee ? &chain[callee - 1] : func);
	}
	dwarf_frame__fill(out, lines, nr_inl + 1);
	return 0;
}
