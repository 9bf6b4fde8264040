// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "objsym: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/log.h"
#include "lib/strtab.h"
#include "symbolize/debuginfo.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf.h"
#include "symbolize/elf.h"
#include "symbolize/gosym.h"
#include "symbolize/objsym.h"

/*
 * The address cache: open addressing, doubled at half load, reset past CACHE_MAX entries (a
 * profile revisits the same few thousand addresses; a reset only costs recomputation). Lines
 * live in one pool so an entry stays 24 bytes.
 */
#define CACHE_MIN 256
#define CACHE_MAX (1u << 20)

struct cache_ent {
	uint64_t offset;
	uint64_t sym_start;
	uint32_t first; /* index into lines */
	uint16_t nr;
	uint16_t used;
};

struct objsym {
	struct elf_file *elf;	    /* the binary's own tables */
	struct elf_file *debug_elf; /* the debug file's or MiniDebugInfo's, with local symbols */
	struct dwarf_info *dwarf;
	struct go_symtab *go;
	unsigned int sources;
	/* Demangled names, owned here so cache entries can point at them. */
	struct strtab *names;
	size_t names_bytes;
	struct cache_ent *cache;
	uint32_t cache_cap, cache_used;
	struct objsym_line *lines;
	uint32_t nr_lines, cap_lines;
	struct objsym_frame scratch; /* what the last lookup returned */
};

static void load_debug(struct objsym *os, int fd, int debug_fd)
{
	int mdi;

	if (debug_fd >= 0) {
		if (!elf_file__open(debug_fd, &os->debug_elf))
			os->sources |= OBJSYM_DEBUG_SYMTAB;
		if (!dwarf_info__open(debug_fd, DWARF_WHOLE_MAX, &os->dwarf))
			os->sources |= OBJSYM_DWARF;
	}
	if (!os->dwarf && !dwarf_info__open(fd, DWARF_WHOLE_MAX, &os->dwarf))
		os->sources |= OBJSYM_DWARF;
	if (!os->debug_elf) {
		/* Distributions that strip .symtab may ship its local symbols xz-compressed. */
		mdi = debuginfo__open_minidebuginfo(fd);
		if (mdi == -EFBIG)
			os->sources |= OBJSYM_TOO_LARGE;
		if (mdi >= 0) {
			if (!elf_file__open(mdi, &os->debug_elf))
				os->sources |= OBJSYM_MINIDEBUGINFO;
			close(mdi);
		}
	}
}

int objsym__load(int fd, int debug_fd, struct objsym **out)
{
	struct objsym *os = calloc(1, sizeof(*os));
	int err;

	if (!os)
		return -ENOMEM;
	err = elf_file__open(fd, &os->elf);
	if (err) {
		free(os);
		return err;
	}
	os->sources = OBJSYM_SYMTAB;
	os->names = strtab__new();
	if (!os->names) {
		objsym__free(os);
		return -ENOMEM;
	}
	load_debug(os, fd, debug_fd);
	err = go_symtab__open(fd, &os->go);
	if (!err)
		os->sources |= OBJSYM_GO;
	else if (err == -EFBIG)
		os->sources |= OBJSYM_TOO_LARGE;
	*out = os;
	return 0;
}

void objsym__free(struct objsym *os)
{
	if (!os)
		return;
	elf_file__free(os->elf);
	elf_file__free(os->debug_elf);
	dwarf_info__free(os->dwarf);
	go_symtab__free(os->go);
	strtab__free(os->names);
	free(os->cache);
	free(os->lines);
	free(os);
}

size_t objsym__bytes(const struct objsym *os)
{
	size_t n = sizeof(*os) + os->names_bytes + (size_t)os->cache_cap * sizeof(*os->cache) +
		   (size_t)os->cap_lines * sizeof(*os->lines);

	n += elf_file__bytes(os->elf);
	if (os->debug_elf)
		n += elf_file__bytes(os->debug_elf);
	if (os->dwarf)
		n += dwarf_info__bytes(os->dwarf);
	if (os->go)
		n += go_symtab__bytes(os->go);
	return n;
}

size_t objsym__maintain(struct objsym *os, uint64_t idle_ns)
{
	return os ? dwarf_info__maintain(os->dwarf, idle_ns) : 0;
}

bool objsym__copying(const struct objsym *os)
{
	return os && dwarf_info__copying(os->dwarf);
}

unsigned long long objsym__reopens(const struct objsym *os)
{
	unsigned long long n = os ? dwarf_info__opens(os->dwarf) : 0;

	return n ? n - 1 : 0;
}

unsigned int objsym__sources(const struct objsym *os)
{
	return os->sources;
}

/* The name users read: demangled when the raw name is mangled. */
static const char *pretty(struct objsym *os, const char *raw)
{
	char *d = raw ? demangle__symbol(raw) : NULL;
	int64_t idx;

	if (!d)
		return raw;
	idx = strtab__intern(os->names, d);
	if (idx >= 0)
		os->names_bytes += strlen(d) + 1 + 2 * sizeof(char *);
	free(d);
	return idx >= 0 ? strtab__str(os->names, (uint32_t)idx) : raw;
}

static void resolve(struct objsym *os, uint64_t offset, struct objsym_frame *fr)
{
	const char *name = NULL, *gname, *file;
	uint64_t vaddr, start = 0, entry;
	struct dwarf_frame df;
	uint32_t line;

	fr->nr = 0;
	fr->sym_start = 0;
	if (elf_file__offset_to_vaddr(os->elf, offset, &vaddr))
		return;
	/*
	 * The binary's own table names exported functions as users know them (getpid, not
	 * __GI___getpid); the debug file's adds the local functions it lacks, and wins only where
	 * it knows a symbol that starts closer to the address.
	 */
	name = elf_file__symbol(os->elf, vaddr, &start);
	if (os->debug_elf) {
		uint64_t dstart;
		const char *dname = elf_file__symbol(os->debug_elf, vaddr, &dstart);

		if (dname && (!name || dstart > start)) {
			name = dname;
			start = dstart;
		}
	}
	fr->sym_start = start;

	/* A line without any function (padding, stray assembly) names nothing. */
	if (os->dwarf && !dwarf_info__lookup(os->dwarf, vaddr, &df) && df.nr &&
	    (name || df.lines[df.nr - 1].function)) {
		for (uint32_t i = 0; i < df.nr && i < SYM_MAX_LINES; i++) {
			const char *raw = df.lines[i].function;

			/* The real function is named by the symbol, as addr2line does: DWARF has no
			 * linkage name for main.cold, lambdas or local-type templates. */
			if (i == df.nr - 1 && name)
				raw = name;
			fr->lines[i] = (struct objsym_line){
				.function = raw ? pretty(os, raw) : "[inlined]",
				.system_name = raw ? raw : "[inlined]",
				.file = df.lines[i].file,
				.line = df.lines[i].line,
			};
		}
		fr->nr = df.nr < SYM_MAX_LINES ? df.nr : SYM_MAX_LINES;
		return;
	}
	/* Go names what it knows; C code linked into a Go binary keeps its ELF name. */
	if (os->go && (gname = go_symtab__lookup(os->go, vaddr, &entry, &file, &line)) != NULL) {
		fr->lines[0] = (struct objsym_line){ gname, gname, file, line };
		fr->sym_start = entry;
		fr->nr = 1;
		return;
	}
	if (name) {
		fr->lines[0] = (struct objsym_line){ pretty(os, name), name, NULL, 0 };
		fr->nr = 1;
	}
}

static void cache_reset(struct objsym *os)
{
	memset(os->cache, 0, (size_t)os->cache_cap * sizeof(*os->cache));
	os->cache_used = 0;
	os->nr_lines = 0;
}

static int cache_grow(struct objsym *os)
{
	uint32_t cap = os->cache_cap ? os->cache_cap * 2 : CACHE_MIN;
	struct cache_ent *c;

	if (cap > CACHE_MAX) {
		cache_reset(os);
		return 0;
	}
	c = calloc(cap, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (uint32_t i = 0; i < os->cache_cap; i++) {
		struct cache_ent *e = &os->cache[i];
		uint32_t j;

		if (!e->used)
			continue;
		for (j = hash__u64(e->offset) & (cap - 1); c[j].used; j = (j + 1) & (cap - 1))
			;
		c[j] = *e;
	}
	free(os->cache);
	os->cache = c;
	os->cache_cap = cap;
	return 0;
}

static int cache_insert(struct objsym *os, struct cache_ent *e, uint64_t offset,
			const struct objsym_frame *fr)
{
	if (os->nr_lines + fr->nr > os->cap_lines) {
		uint32_t cap = os->cap_lines ? os->cap_lines * 2 : 1024;
		struct objsym_line *l;

		while (cap < os->nr_lines + fr->nr)
			cap *= 2;
		l = realloc(os->lines, (size_t)cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		os->lines = l;
		os->cap_lines = cap;
	}
	/* A miss has no lines, and the pool may not exist yet: no pointer into it then. */
	if (fr->nr)
		memcpy(&os->lines[os->nr_lines], fr->lines, fr->nr * sizeof(*fr->lines));
	*e = (struct cache_ent){ .offset = offset, .sym_start = fr->sym_start,
				 .first = os->nr_lines, .nr = fr->nr, .used = 1 };
	os->nr_lines += fr->nr;
	os->cache_used++;
	return 0;
}

int objsym__lookup(struct objsym *os, uint64_t offset, const struct objsym_frame **out)
{
	struct objsym_frame *fr = &os->scratch;
	struct cache_ent *e;
	uint32_t j;

	if ((os->cache_used + 1) * 2 > os->cache_cap && cache_grow(os))
		return -ENOMEM;
	for (j = hash__u64(offset) & (os->cache_cap - 1); os->cache[j].used;
	     j = (j + 1) & (os->cache_cap - 1)) {
		e = &os->cache[j];
		if (e->offset == offset) {
			fr->nr = e->nr;
			fr->sym_start = e->sym_start;
			if (e->nr)
				memcpy(fr->lines, &os->lines[e->first],
				       e->nr * sizeof(*fr->lines));
			*out = fr;
			return 0;
		}
	}
	resolve(os, offset, fr);
	/* Not caching is only slower: the answer stands either way. */
	cache_insert(os, &os->cache[j], offset, fr);
	*out = fr;
	return 0;
}
