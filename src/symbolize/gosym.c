// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "gosym: " fmt

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/log.h"
#include "symbolize/elf.h"
#include "symbolize/gosym.h"

/*
 * The pclntab ("pc-line table") as Go's runtime/symtab.go lays it out:
 *
 *   header   magic u32, 0 u8, 0 u8, pc quantum u8, pointer size u8, then pointer-sized fields:
 *            nfunc, nfiles, [textStart: 1.18+], funcnameOffset, cuOffset, filetabOffset,
 *            pctabOffset, pclnOffset (offsets from the start of the table)
 *   functab  at pclnOffset, nfunc + 1 pairs (entry, funcoff) sorted by entry; the last entry is
 *            the end of the text. 1.18+: two u32, entry relative to textStart; 1.16: two
 *            pointers, entry absolute. funcoff is relative to pclnOffset and leads to a _func.
 *   _func    entry (u32 1.18+, pointer 1.16), then u32s: nameOff (into funcnametab), args,
 *            deferreturn, pcsp, pcfile, pcln (into pctab), npcdata, cuOffset (into cutab), ...
 *   cutab    u32 offsets into filetab, one per file of each compilation unit; pcfile values
 *            index it from the function's cuOffset.
 *   pctab    pc-value tables: pairs of varints (zig-zag value delta, pc delta / quantum),
 *            starting from value -1 at the function entry, ended by a 0 value delta.
 */
#define GO_MAGIC_1_2  0xfffffffbu
#define GO_MAGIC_1_16 0xfffffffau
#define GO_MAGIC_1_18 0xfffffff0u
#define GO_MAGIC_1_20 0xfffffff1u

#define HDR_FIXED 8 /* magic, two pad bytes, quantum, pointer size */

/* _func fields after its entry, as byte offsets from the end of the entry field. */
#define FUNC_NAMEOFF  0
#define FUNC_PCSP     12
#define FUNC_PCFILE   16
#define FUNC_PCLN     20
#define FUNC_CUOFFSET 28
#define FUNC_MIN_SIZE 32
/* funcFlag (1.17+): in 1.16-1.19 right after funcID, which follows cuOffset; 1.20 put startLine
 * before funcID. 1.16 has padding there: no flags. */
#define FUNC_FLAG_1_16	  33
#define FUNC_FLAG_1_20	  37
#define FUNCFLAG_TOPFRAME 1
#define FUNCFLAG_SPWRITE  2

/*
 * The table is copied whole: a copy past the file's end is refused first (its size is in a
 * section header, anybody's to write), and one past this budget too, far above the tables of
 * real Go programs (some MiB; the largest known, some tens).
 */
#define PCLNTAB_MAX_SIZE (256ull << 20)

struct go_symtab {
	/* A copy of the table, one NUL past its end so every string in it is terminated. */
	uint8_t *data;
	uint64_t size;
	bool rel_entries; /* functab entries are u32 offsets from text_start (1.18+) */
	bool start_line;  /* _func has startLine before funcID (1.20+) */
	uint8_t ptr_size;
	uint8_t quantum;
	uint64_t nfunc;
	uint64_t text_start;
	uint64_t funcname_off;
	uint64_t cu_off;
	uint64_t filetab_off;
	uint64_t pctab_off;
	uint64_t functab_off;
	uint32_t functab_entsize;
};

/* Little-endian reads within the table: the caller has checked the bounds. */
static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static bool go_symtab__has(const struct go_symtab *gs, uint64_t off, uint64_t len)
{
	return off <= gs->size && len <= gs->size - off;
}

/* A u32 at off, or false when it lies outside the table. */
static bool go_symtab__u32(const struct go_symtab *gs, uint64_t off, uint32_t *v)
{
	if (!go_symtab__has(gs, off, 4))
		return false;
	*v = le32(gs->data + off);
	return true;
}

static uint64_t go_symtab__uptr(const struct go_symtab *gs, uint64_t off)
{
	return gs->ptr_size == 8 ? le64(gs->data + off) : le32(gs->data + off);
}

/* The string at off, or NULL outside the table. The trailing NUL of the copy ends it. */
static const char *go_symtab__str(const struct go_symtab *gs, uint64_t off)
{
	return off < gs->size ? (const char *)gs->data + off : NULL;
}

static uint64_t go_symtab__entry(const struct go_symtab *gs, uint64_t i)
{
	const uint8_t *p = gs->data + gs->functab_off + i * gs->functab_entsize;

	if (gs->rel_entries)
		return gs->text_start + le32(p);
	return go_symtab__uptr(gs, p - gs->data);
}

static uint64_t go_symtab__funcoff(const struct go_symtab *gs, uint64_t i)
{
	const uint8_t *p = gs->data + gs->functab_off + i * gs->functab_entsize;

	if (gs->rel_entries)
		return le32(p + 4);
	return go_symtab__uptr(gs, p - gs->data + gs->ptr_size);
}

static int go_symtab__parse_header(struct go_symtab *gs, uint64_t text_addr)
{
	uint64_t field[8], nr_fields, functab_size;
	const uint8_t *d = gs->data;
	uint32_t magic;

	if (gs->size < HDR_FIXED)
		return -EINVAL;
	magic = le32(d);
	switch (magic) {
	case GO_MAGIC_1_20:
		gs->start_line = true;
		/* fall through */
	case GO_MAGIC_1_18:
		gs->rel_entries = true;
		nr_fields = 8;
		break;
	case GO_MAGIC_1_16:
		nr_fields = 7;
		break;
	case GO_MAGIC_1_2:
		pr_debug("Go 1.2-1.15 pclntab layout is not supported\n");
		return -ENOTSUP;
	default:
		/* Big-endian files land here too: their magic reads byte-swapped. */
		pr_debug("unknown pclntab magic %#x\n", magic);
		return -ENOTSUP;
	}
	gs->quantum = d[6];
	gs->ptr_size = d[7];
	if (d[4] || d[5] || (gs->ptr_size != 4 && gs->ptr_size != 8) || !gs->quantum)
		return -EINVAL;
	if (!go_symtab__has(gs, HDR_FIXED, nr_fields * gs->ptr_size))
		return -EINVAL;
	for (uint64_t i = 0; i < nr_fields; i++)
		field[i] = go_symtab__uptr(gs, HDR_FIXED + i * gs->ptr_size);
	gs->nfunc = field[0];
	if (gs->rel_entries) {
		/*
		 * textStart is a relocated pointer; a linker that leaves relocated words zero in
		 * the file (RELA without applied addends) makes the start of .text the best guess.
		 */
		gs->text_start = field[2] ? field[2] : text_addr;
		memmove(&field[2], &field[3], 5 * sizeof(field[0]));
	}
	gs->funcname_off = field[2];
	gs->cu_off = field[3];
	gs->filetab_off = field[4];
	gs->pctab_off = field[5];
	gs->functab_off = field[6];
	gs->functab_entsize = gs->rel_entries ? 8 : 2u * gs->ptr_size;
	if (gs->funcname_off > gs->size || gs->cu_off > gs->size || gs->filetab_off > gs->size ||
	    gs->pctab_off > gs->size)
		return -EINVAL;
	/* nfunc + 1 entries: the extra one ends the last function. */
	if (gs->nfunc >= gs->size / gs->functab_entsize)
		return -EINVAL;
	functab_size = (gs->nfunc + 1) * gs->functab_entsize;
	if (!go_symtab__has(gs, gs->functab_off, functab_size))
		return -EINVAL;
	return 0;
}

/* One varint of a pc-value table, at most 32 bits; advances *off. */
static bool go_symtab__uvarint(const struct go_symtab *gs, uint64_t *off, uint32_t *v)
{
	uint32_t val = 0;

	for (unsigned int shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*off >= gs->size)
			return false;
		b = gs->data[(*off)++];
		val |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = val;
			return true;
		}
	}
	return false;
}

/*
 * The value a pc-value table gives pc in the function starting at entry. Returns false when the
 * table ends before pc or is malformed.
 */
static bool go_symtab__pcvalue(const struct go_symtab *gs, uint32_t table, uint64_t entry,
			       uint64_t pc, int32_t *out)
{
	uint64_t off = gs->pctab_off + table, cur = entry;
	int32_t val = -1;

	for (bool first = true;; first = false) {
		uint32_t uvdelta, pcdelta;

		if (!go_symtab__uvarint(gs, &off, &uvdelta))
			return false;
		/* A zero value delta ends the table, except as the very first (value -1 stays). */
		if (!uvdelta && !first)
			return false;
		/* Zig-zag: the low bit is the sign. Wraps in unsigned, as the runtime's does. */
		val = (int32_t)((uint32_t)val + ((uvdelta & 1) ? ~(uvdelta >> 1) : (uvdelta >> 1)));
		if (!go_symtab__uvarint(gs, &off, &pcdelta))
			return false;
		cur += (uint64_t)pcdelta * gs->quantum;
		if (pc < cur) {
			*out = val;
			return true;
		}
	}
}

static const char *go_symtab__file(const struct go_symtab *gs, uint32_t cu, int32_t fileno)
{
	uint32_t name;

	if (cu == UINT32_MAX || fileno < 0)
		return NULL;
	if (!go_symtab__u32(gs, gs->cu_off + 4 * ((uint64_t)cu + (uint32_t)fileno), &name) ||
	    name == UINT32_MAX)
		return NULL;
	return go_symtab__str(gs, gs->filetab_off + name);
}

const char *go_symtab__lookup(const struct go_symtab *gs, uint64_t vaddr, uint64_t *entry,
			      const char **file, uint32_t *line)
{
	uint64_t lo = 0, hi, funcoff, fields, start;
	uint32_t name_off, pcfile, pcln, cu;
	const char *name;
	int32_t v;

	if (file)
		*file = NULL;
	if (line)
		*line = 0;
	if (!gs || !gs->nfunc || vaddr < go_symtab__entry(gs, 0) ||
	    vaddr >= go_symtab__entry(gs, gs->nfunc))
		return NULL;
	/* The last function whose entry is <= vaddr. */
	hi = gs->nfunc;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (go_symtab__entry(gs, mid) <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	start = go_symtab__entry(gs, lo);
	funcoff = go_symtab__funcoff(gs, lo);
	/* Checked before adding: a 1.16 funcoff is a full pointer and could wrap the sum. */
	if (funcoff > gs->size)
		return NULL;
	fields = gs->functab_off + funcoff + (gs->rel_entries ? 4 : gs->ptr_size);
	if (!go_symtab__has(gs, fields, FUNC_MIN_SIZE))
		return NULL;
	name_off = le32(gs->data + fields + FUNC_NAMEOFF);
	name = go_symtab__str(gs, gs->funcname_off + name_off);
	if (!name)
		return NULL;
	if (entry)
		*entry = start;
	pcfile = le32(gs->data + fields + FUNC_PCFILE);
	pcln = le32(gs->data + fields + FUNC_PCLN);
	cu = le32(gs->data + fields + FUNC_CUOFFSET);
	/* Offset 0 means no table: assembly stubs may have neither. */
	if (line && pcln && go_symtab__pcvalue(gs, pcln, start, vaddr, &v) && v > 0)
		*line = (uint32_t)v;
	if (file && pcfile && go_symtab__pcvalue(gs, pcfile, start, vaddr, &v))
		*file = go_symtab__file(gs, cu, v);
	return name;
}

/* Where function i's _func fields start after its entry field, or 0 outside the table. */
static uint64_t go_symtab__fields(const struct go_symtab *gs, uint64_t i, uint64_t min_size)
{
	uint64_t funcoff = go_symtab__funcoff(gs, i), fields;

	/* Checked before adding: a 1.16 funcoff is a full pointer and could wrap the sum. */
	if (funcoff > gs->size)
		return 0;
	fields = gs->functab_off + funcoff + (gs->rel_entries ? 4 : gs->ptr_size);
	return go_symtab__has(gs, fields, min_size) ? fields : 0;
}

struct sp_buf {
	uint64_t *pc;
	int32_t *delta;
	size_t nr, cap;
};

static int sp_buf__push(struct sp_buf *b, uint64_t pc, int32_t delta)
{
	if (b->nr && b->delta[b->nr - 1] == delta)
		return 0;
	if (b->nr == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		uint64_t *pcs = realloc(b->pc, cap * sizeof(*pcs));
		int32_t *ds;

		if (!pcs)
			return -ENOMEM;
		b->pc = pcs;
		ds = realloc(b->delta, cap * sizeof(*ds));
		if (!ds)
			return -ENOMEM;
		b->delta = ds;
		b->cap = cap;
	}
	b->pc[b->nr] = pc;
	b->delta[b->nr++] = delta;
	return 0;
}

/*
 * Decodes the pc-value table at table for [entry, end) into b. Returns 1 when it covers the
 * function (a table may stop short of trailing padding), 0 when malformed, -ENOMEM.
 */
static int go_symtab__decode(const struct go_symtab *gs, uint32_t table, uint64_t entry,
			     uint64_t end, struct sp_buf *b)
{
	uint64_t off = gs->pctab_off + table, cur = entry;
	int32_t val = -1;

	b->nr = 0;
	for (bool first = true; cur < end; first = false) {
		uint32_t uvdelta, pcdelta;
		int err;

		if (!go_symtab__uvarint(gs, &off, &uvdelta))
			return 0;
		if (!uvdelta && !first)
			break;
		val = (int32_t)((uint32_t)val + ((uvdelta & 1) ? ~(uvdelta >> 1) : (uvdelta >> 1)));
		/* The compiler never emits an empty range: one would give two rows one pc. */
		if (!go_symtab__uvarint(gs, &off, &pcdelta) || !pcdelta)
			return 0;
		/* A delta is never negative nor near 2^31 (stacks are 1 GB at most). */
		if (val < 0 || val > (1 << 30))
			return 0;
		err = sp_buf__push(b, cur, val);
		if (err)
			return err;
		cur += (uint64_t)pcdelta * gs->quantum;
	}
	return b->nr > 0;
}

int go_symtab__for_each_sp(const struct go_symtab *gs,
			   int (*fn)(const struct go_func_sp *f, void *ctx), void *ctx)
{
	uint64_t flag_at = gs->start_line ? FUNC_FLAG_1_20 : FUNC_FLAG_1_16;
	struct sp_buf b = {};
	int ret = 0;

	for (uint64_t i = 0; i < gs->nfunc && !ret; i++) {
		uint64_t fields = go_symtab__fields(gs, i, flag_at + 1);
		struct go_func_sp f = {};
		uint32_t pcsp;
		uint8_t flag;

		f.entry = go_symtab__entry(gs, i);
		f.end = go_symtab__entry(gs, i + 1);
		if (!fields || f.end <= f.entry || f.end - f.entry > UINT32_MAX)
			continue;
		pcsp = le32(gs->data + fields + FUNC_PCSP);
		f.name =
		    go_symtab__str(gs, gs->funcname_off + le32(gs->data + fields + FUNC_NAMEOFF));
		if (!pcsp || !f.name)
			continue;
		ret = go_symtab__decode(gs, pcsp, f.entry, f.end, &b);
		if (ret <= 0)
			continue;
		flag = gs->data[fields + flag_at];
		f.topframe = (flag & FUNCFLAG_TOPFRAME) || !strcmp(f.name, "runtime.goexit");
		f.spwrite = flag & FUNCFLAG_SPWRITE;
		f.pc = b.pc;
		f.delta = b.delta;
		f.nr = b.nr;
		ret = fn(&f, ctx);
	}
	free(b.pc);
	free(b.delta);
	return ret;
}

struct pclntab_loc {
	uint64_t offset; /* in the file */
	uint64_t size;
	uint64_t text_addr; /* start of .text, for a textStart left zero */
};

/*
 * The file range of the allocated PROGBITS section holding vaddr, or false: the table ends with
 * its section, which a PT_LOAD can run past.
 */
static bool section__file_range(Elf *elf, uint64_t vaddr, uint64_t *offset, uint64_t *avail)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_ALLOC))
			continue;
		if (vaddr >= shdr.sh_addr && vaddr - shdr.sh_addr < shdr.sh_size) {
			*offset = shdr.sh_offset + (vaddr - shdr.sh_addr);
			*avail = shdr.sh_size - (vaddr - shdr.sh_addr);
			return true;
		}
	}
	return false;
}

struct pclntab_syms {
	uint64_t start, end;
};

/* runtime.pclntab and runtime.epclntab, defined; the last of each name wins. */
static int pclntab_syms__match(const struct elf_symbol *s, void *ctx)
{
	struct pclntab_syms *ps = ctx;

	if (s->sym.st_shndx == SHN_UNDEF || strncmp(s->name, "runtime.", 8))
		return 0;
	if (!strcmp(s->name + 8, "pclntab"))
		ps->start = s->sym.st_value;
	else if (!strcmp(s->name + 8, "epclntab"))
		ps->end = s->sym.st_value;
	return 0;
}

/*
 * Where the table is when the section has been merged away (external linking of a PIE puts it in
 * .data.rel.ro): between the runtime.pclntab and runtime.epclntab symbols, if .symtab is kept.
 */
static bool pclntab__find_by_symbols(Elf *elf, struct pclntab_loc *loc)
{
	struct pclntab_syms ps = {};
	uint64_t avail;

	elf__for_each_symbol(elf, ELF_SYMTAB, pclntab_syms__match, &ps);
	if (!ps.start || ps.end <= ps.start ||
	    !section__file_range(elf, ps.start, &loc->offset, &avail))
		return false;
	loc->size = ps.end - ps.start < avail ? ps.end - ps.start : avail;
	return true;
}

static int pclntab__find(Elf *elf, struct pclntab_loc *loc)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	memset(loc, 0, sizeof(*loc));
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENODATA;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".text")) {
			loc->text_addr = shdr.sh_addr;
		} else if (!found && shdr.sh_type == SHT_PROGBITS &&
			   (!strcmp(name, ".gopclntab") ||
			    !strcmp(name, ".data.rel.ro.gopclntab"))) {
			/* The second name is what internal linking gives a PIE. */
			loc->offset = shdr.sh_offset;
			loc->size = shdr.sh_size;
			found = true;
		}
	}
	if (!found && !pclntab__find_by_symbols(elf, loc))
		return -ENODATA;
	return 0;
}

int go_symtab__open(int fd, struct go_symtab **out)
{
	struct pclntab_loc loc;
	struct go_symtab *gs;
	struct stat st;
	Elf *elf;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_err("libelf: %s\n", elf_errmsg(-1));
		return -ENOTSUP;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out_end;
	}
	err = pclntab__find(elf, &loc);
	if (err)
		goto out_end;
	if (loc.size < HDR_FIXED || fstat(fd, &st) || loc.offset > (uint64_t)st.st_size ||
	    loc.size > (uint64_t)st.st_size - loc.offset) {
		err = -EINVAL;
		goto out_end;
	}
	if (loc.size > PCLNTAB_MAX_SIZE) {
		pr_debug("pclntab of %" PRIu64 " bytes: past the budget\n", loc.size);
		err = -EFBIG;
		goto out_end;
	}
	gs = calloc(1, sizeof(*gs));
	if (!gs) {
		err = -ENOMEM;
		goto out_end;
	}
	gs->size = loc.size;
	gs->data = malloc(loc.size + 1);
	if (!gs->data) {
		err = -ENOMEM;
		goto out_free;
	}
	/*
	 * A private copy rather than a mapping: a mapped file that shrinks under us would kill the
	 * daemon with SIGBUS, and libelf's view goes away with elf_end() anyway.
	 */
	err = fileio__pread_all(fd, gs->data, loc.size, loc.offset);
	if (err == -ENODATA)
		err = -EIO; /* the file is shorter than its headers say */
	if (err)
		goto out_free;
	gs->data[loc.size] = '\0';
	err = go_symtab__parse_header(gs, loc.text_addr);
	if (err)
		goto out_free;
	pr_debug("pclntab: %" PRIu64 " functions, %" PRIu64 " bytes\n", gs->nfunc, gs->size);
	elf_end(elf);
	*out = gs;
	return 0;

out_free:
	go_symtab__free(gs);
out_end:
	elf_end(elf);
	return err;
}

void go_symtab__free(struct go_symtab *gs)
{
	if (!gs)
		return;
	free(gs->data);
	free(gs);
}

size_t go_symtab__nr_funcs(const struct go_symtab *gs)
{
	return gs ? (size_t)gs->nfunc : 0;
}

size_t go_symtab__bytes(const struct go_symtab *gs)
{
	return gs ? sizeof(*gs) + (size_t)gs->size + 1 : 0;
}
