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
#include <sys/mman.h>

#include "lib/array.h"
#include "lib/log.h"
#include "lib/strtab.h"
#include "lib/timeconst.h"
#include "symbolize/dwarf_priv.h"
#include "symbolize/elf.h"

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
	di->cus[di->nr_cus] = (struct dwarf_cu){.off = dwarf_dieoffset(cudie)};
	/* A CU without ranges (data only, or a compiler that leaves them out) is still reachable
	 * through .debug_aranges (ar_ranges). */
	return range_vec__add_die(&di->cu_ranges, cudie, di->nr_cus++);
}

static int dwarf_cu__cmp_offset(const void *key, const void *elem)
{
	Dwarf_Off off = *(const Dwarf_Off *)key;
	Dwarf_Off cu_off = ((const struct dwarf_cu *)elem)->off;

	return off < cu_off ? -1 : off > cu_off;
}

/* .debug_aranges, read once: the CU lookup then needs no libdw. */
static int dwarf_info__load_aranges(struct dwarf_info *di)
{
	Dwarf_Aranges *ar;
	size_t n;
	int err;

	if (dwarf_getaranges(di->dw, &ar, &n))
		return 0; /* none, or unreadable: the CUs' own ranges stay */
	for (size_t i = 0; i < n; i++) {
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		Dwarf_Addr addr;
		Dwarf_Word len;
		Dwarf_Off off;
		struct dwarf_cu *cu;

		if (!a || dwarf_getarangeinfo(a, &addr, &len, &off))
			continue;
		cu = bsearch(&off, di->cus, di->nr_cus, sizeof(*di->cus), dwarf_cu__cmp_offset);
		if (cu && addr + len > addr) {
			err = range_vec__add(&di->ar_ranges, addr, addr + len,
					     (size_t)(cu - di->cus));
			if (err)
				return err;
		}
	}
	range_vec__sort(&di->ar_ranges);
	return 0;
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
	err = dwarf_info__load_aranges(di);
	if (err)
		return err;
	di->bytes += cus_cap * sizeof(*di->cus) + range_vec__bytes(&di->cu_ranges) +
		     range_vec__bytes(&di->ar_ranges);
	return 0;
}

/* libdw over the file: at open, and again for a CU not copied yet after a release. */
static int dwarf_info__begin(struct dwarf_info *di)
{
	int err;

	if (di->dw)
		return 0;
	di->elf = elf_begin(di->fd, ELF_C_READ, NULL);
	err = -ENOEXEC;
	if (!di->elf || elf_kind(di->elf) != ELF_K_ELF)
		goto out_end;
	/* Checked here rather than from dwarf_begin_elf's failure: libdw's error codes are not
	 * public, and "no DWARF" must be told apart from "broken DWARF". (A file rewritten since
	 * the first open keeps its fd's inode: the same bytes, unless written in place.) */
	err = -ENODATA;
	if (!has_debug_info(di->elf))
		goto out_end;
	err = -EINVAL;
	if (!strings_terminated(di->elf))
		goto out_end;
	hide_unused_sections(di->elf);
	di->dw = dwarf_begin_elf(di->elf, DWARF_C_READ, NULL);
	if (!di->dw) {
		pr_debug("dwarf_begin_elf: %s\n", dwarf_errmsg(-1));
		goto out_end;
	}
	di->open_bytes = debug_sections_bytes(di->elf);
	return 0;

out_end:
	if (di->elf)
		elf_end(di->elf);
	di->elf = NULL;
	return err;
}

int dwarf_info__open(int fd, size_t whole_max, struct dwarf_info **out)
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
	di->fd = fd;
	di->bytes = sizeof(*di);
	di->strs = strtab__new();
	err = di->strs ? dwarf_info__begin(di) : -ENOMEM;
	if (err)
		goto out_free;
	err = dwarf_info__load_cus(di);
	if (err)
		goto out_free;
	di->whole = di->open_bytes <= whole_max;
	/* libdw's per-CU structures, made by the walk over every unit header */
	di->open_bytes += di->nr_cus * LIBDW_CU_BYTES;
	di->used_ns = now_ns();
	di->opens = 1;
	*out = di;
	return 0;

out_free:
	dwarf_info__free(di);
	return err;
}

/* Chunks are mapped, not malloc'd: their pages are resident as they are written, and never
 * share a page with anything else. */
#define KEEP_CHUNK (256u << 10)

void *dwarf_info__keep(struct dwarf_info *di, const void *src, size_t size)
{
	size_t at = (di->kept_used + 7) & ~(size_t)7;
	void *dst;

	if (!size)
		return NULL;
	if (!di->kept || at + size > di->kept->size) {
		size_t want = sizeof(struct keep_chunk) + size;
		size_t map = want > KEEP_CHUNK ? (want + 4095) & ~(size_t)4095 : KEEP_CHUNK;
		struct keep_chunk *c =
		    mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			return NULL;
		c->size = map;
		c->next = di->kept;
		di->kept = c;
		at = (sizeof(*c) + 7) & ~(size_t)7;
	}
	dst = (char *)di->kept + at;
	memcpy(dst, src, size);
	di->kept_used = at + size;
	return dst;
}

/* Forgets libdw's strings: the memo of joined paths is keyed by them. */
static void dwarf_info__end(struct dwarf_info *di)
{
	dwarf_info__forget_paths(di);
	/* dwarf_begin_elf borrows the Elf: end the Dwarf first. */
	if (di->dw)
		dwarf_end(di->dw);
	if (di->elf)
		elf_end(di->elf);
	di->dw = NULL;
	di->elf = NULL;
	di->open_bytes = 0;
	di->rows_open = 0;
}

void dwarf_info__free(struct dwarf_info *di)
{
	if (!di)
		return;
	dwarf_info__end(di);
	while (di->kept) {
		struct keep_chunk *next = di->kept->next;

		munmap(di->kept, di->kept->size);
		di->kept = next;
	}
	free(di->cus);
	free(di->cu_ranges.v);
	free(di->ar_ranges.v);
	free(di->paths);
	strtab__free(di->strs);
	free(di);
}

size_t dwarf_info__bytes(const struct dwarf_info *di)
{
	return di ? di->bytes + di->open_bytes : 0;
}

/*
 * A whole copy goes DWARF_WHOLE_STEP_ROWS rows a call (glibc's: ten calls of ~20 ms), so that
 * no lookup waits for it. libdw keeps each line table it read until dwarf_end, 64 bytes a row:
 * it is ended and begun again every DWARF_WHOLE_BATCH_ROWS rows so that its peak stays near its
 * sections (glibc's 291,000 rows would hold 18 MiB more at once).
 */
#define DWARF_WHOLE_STEP_ROWS  20000
#define DWARF_WHOLE_BATCH_ROWS 50000

static int dwarf_info__copy_step(struct dwarf_info *di)
{
	size_t rows = 0;
	int err;

	while (di->next_cu < di->nr_cus && rows < DWARF_WHOLE_STEP_ROWS) {
		struct dwarf_cu *cu = &di->cus[di->next_cu++];

		if (cu->indexed)
			continue;
		err = dwarf_info__begin(di);
		if (err)
			return err;
		dwarf_cu__index(di, cu);
		rows += cu->nr_rows;
		di->rows_open += cu->nr_rows;
		/* (not after the last: dwarf_info__maintain lets it go, and says so) */
		if (di->rows_open >= DWARF_WHOLE_BATCH_ROWS && di->next_cu < di->nr_cus)
			dwarf_info__end(di);
	}
	return 0;
}

size_t dwarf_info__maintain(struct dwarf_info *di, uint64_t idle_ns)
{
	size_t freed;

	if (!di)
		return 0;
	if (di->whole && di->next_cu < di->nr_cus && dwarf_info__copy_step(di))
		di->next_cu = di->nr_cus; /* unreadable now: what was copied stays */
	if (!di->dw)
		return 0;
	if (di->whole ? di->next_cu < di->nr_cus : now_ns() - di->used_ns < idle_ns)
		return 0;
	freed = di->open_bytes;
	dwarf_info__end(di);
	di->lets_go++;
	return freed;
}

bool dwarf_info__copying(const struct dwarf_info *di)
{
	return di && di->whole && di->next_cu < di->nr_cus;
}

unsigned long long dwarf_info__opens(const struct dwarf_info *di)
{
	return di ? di->opens : 0;
}

unsigned long long dwarf_info__lets_go(const struct dwarf_info *di)
{
	return di ? di->lets_go : 0;
}

/* ---- lookups: the copies alone ------------------------------------------------------------- */

static struct dwarf_cu *dwarf_info__find_cu(struct dwarf_info *di, uint64_t vaddr)
{
	const struct addr_range *r = range_vec__find(&di->cu_ranges, vaddr);

	if (!r)
		r = range_vec__find(&di->ar_ranges, vaddr);
	return r ? &di->cus[r->idx] : NULL;
}

int dwarf_info__lookup(struct dwarf_info *di, uint64_t vaddr, struct dwarf_frame *out)
{
	struct dwarf_cu *cu;
	int err;

	cu = dwarf_info__find_cu(di, vaddr);
	if (!cu)
		return -ENOENT;
	if (!cu->indexed) {
		if (!di->dw)
			di->opens++;
		err = dwarf_info__begin(di);
		if (err)
			return err;
		dwarf_cu__index(di, cu);
		di->rows_open += cu->nr_rows;
	}
	dwarf_cu__lookup(di, cu, vaddr, out);
	return 0;
}
