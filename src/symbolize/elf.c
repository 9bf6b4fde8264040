// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "elf: " fmt

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/hex.h"
#include "symbolize/elf.h"

/* Build IDs are 20 bytes (sha1) by default; --build-id=0x... may be longer, but not sanely. */
#define BUILD_ID_MAX 64

struct elf_seg {
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
};

/*
 * 16 bytes a symbol: big binaries have hundreds of thousands of them and they stay cached.
 * size is the effective extent, with size-0 symbols already stretched to the next symbol.
 */
struct elf_sym {
	uint64_t start;
	uint32_t size;
	uint32_t name; /* offset into elf_file.names */
};

struct elf_file {
	char build_id[2 * BUILD_ID_MAX + 1];
	uint32_t nr_segs;
	struct elf_seg *segs;
	size_t nr_syms;
	struct elf_sym *syms;
	char *names;
	size_t names_size;
};

/* A symbol while the tables are built; name points into libelf's mapping of the file. */
struct sym_cand {
	uint64_t start;
	uint64_t size;
	uint64_t limit; /* end of its section: a size-0 symbol never stretches past it */
	const char *name;
	uint32_t rank; /* lower wins when several symbols share an address */
};

static int elf__init(void)
{
	/* elf_version() only records the version; calling it every time is cheap and race-free
	 * enough since every caller stores the same value. */
	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_err("libelf: %s\n", elf_errmsg(-1));
		return -ENOTSUP;
	}
	return 0;
}

static int elf__begin(int fd, Elf **out)
{
	Elf *elf;
	int err;

	err = elf__init();
	if (err)
		return err;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		/* libelf fails here on empty and unmappable files instead of giving ELF_K_NONE */
		pr_debug("elf_begin: %s\n", elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOEXEC;
	}
	*out = elf;
	return 0;
}

/* Returns 1 when data held a GNU build ID note (copied into hex), 0 otherwise. */
static int notes__find_build_id(Elf_Data *data, char *hex, size_t hex_size)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nhdr;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		off = next;
		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != sizeof("GNU") ||
		    memcmp(name, "GNU", sizeof("GNU")))
			continue;
		if (nhdr.n_descsz == 0 || nhdr.n_descsz > BUILD_ID_MAX ||
		    2 * (size_t)nhdr.n_descsz + 1 > hex_size)
			continue;
		hex__encode((const unsigned char *)data->d_buf + desc_off, nhdr.n_descsz, hex);
		return 1;
	}
	return 0;
}

/*
 * Program headers first: they are what the loader maps, and they survive tools that drop the
 * section headers. Sections are the fallback for files without PT_NOTE.
 */
static void elf__find_build_id(Elf *elf, char *hex, size_t hex_size)
{
	size_t phnum;
	Elf_Scn *scn = NULL;

	hex[0] = '\0';
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr phdr;
			Elf_Data *data;

			if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_NOTE)
				continue;
			data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz,
						    phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (data && notes__find_build_id(data, hex, hex_size))
				return;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && notes__find_build_id(data, hex, hex_size))
			return;
	}
}

int elf__vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elf__load_base(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *base)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (pgoff < (ph.p_offset & ~(page - 1)) || pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		*base = start - pgoff - (ph.p_vaddr - ph.p_offset);
		return 0;
	}
	return -ENOENT;
}

int elf__read_vaddr(Elf *elf, uint64_t vaddr, void *buf, size_t n)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (size_t i = 0; i < phnum; i++) {
		Elf_Data *d;
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr >= ph.p_filesz || n > ph.p_filesz - (vaddr - ph.p_vaddr))
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset + (vaddr - ph.p_vaddr), n, ELF_T_BYTE);
		if (!d || d->d_size != n)
			return -EIO;
		memcpy(buf, d->d_buf, n);
		return 0;
	}
	return -ENOENT;
}

Elf_Scn *elf__section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int elf__for_each_symbol(Elf *elf, unsigned int tables,
			 int (*fn)(const struct elf_symbol *s, void *ctx), void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		struct elf_symbol s;
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t nr;

		if (!gelf_getshdr(scn, &shdr) || !shdr.sh_entsize)
			continue;
		if (!((shdr.sh_type == SHT_SYMTAB && (tables & ELF_SYMTAB)) ||
		      (shdr.sh_type == SHT_DYNSYM && (tables & ELF_DYNSYM))))
			continue;
		/* A debug file's .dynsym is NOBITS: libelf gives its size but no bytes. */
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		s.table = elf_ndxscn(scn);
		s.dynsym = shdr.sh_type == SHT_DYNSYM;
		nr = shdr.sh_size / shdr.sh_entsize;
		for (s.index = 1; s.index < nr; s.index++) {
			int ret;

			if (!gelf_getsym(data, (int)s.index, &s.sym))
				break;
			s.name = elf_strptr(elf, shdr.sh_link, s.sym.st_name);
			if (!s.name)
				continue;
			ret = fn(&s, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int elf__read_build_id(int fd, char *hex, size_t hex_size)
{
	char buf[2 * BUILD_ID_MAX + 1];
	Elf *elf;
	int err;

	if (!hex || !hex_size)
		return -EINVAL;
	hex[0] = '\0';
	err = elf__begin(fd, &elf);
	if (err)
		return err;
	elf__find_build_id(elf, buf, sizeof(buf));
	elf_end(elf);
	if (strlen(buf) + 1 > hex_size)
		return -ERANGE;
	strcpy(hex, buf);
	return 0;
}

static int elf_file__load_segments(struct elf_file *ef, Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum)) {
		/* Object files have no program headers; they simply map nothing. */
		return 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		uint32_t nr = 0;

		/* The first pass counts, so that elf_file__bytes() is exact. */
		if (pass) {
			ef->segs = calloc(ef->nr_segs ? ef->nr_segs : 1, sizeof(*ef->segs));
			if (!ef->segs)
				return -ENOMEM;
		}
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr phdr;

			if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD ||
			    !phdr.p_filesz)
				continue;
			if (pass)
				ef->segs[nr] = (struct elf_seg){
				    .offset = phdr.p_offset,
				    .filesz = phdr.p_filesz,
				    .vaddr = phdr.p_vaddr,
				};
			nr++;
		}
		ef->nr_segs = nr;
	}
	return 0;
}

/*
 * Which of several symbols at one address names it, lowest rank first:
 *   1. a typed function (FUNC, GNU_IFUNC) over an untyped label (NOTYPE),
 *   2. .symtab over .dynsym,
 *   3. GLOBAL over WEAK over LOCAL (the public name over its internal aliases),
 *   4. a symbol with a size over one without,
 * and then, in sym_cand__cmp, fewer leading underscores ("malloc" over "__libc_malloc"),
 * then the byte-wise smaller name, so the result never depends on table order.
 */
static uint32_t sym__rank(const GElf_Sym *sym, bool symtab)
{
	uint32_t rank = 0;

	if (GELF_ST_TYPE(sym->st_info) == STT_NOTYPE)
		rank |= 1u << 4;
	if (!symtab)
		rank |= 1u << 3;
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		break;
	case STB_WEAK:
		rank |= 1u << 1;
		break;
	default:
		rank |= 2u << 1;
		break;
	}
	if (!sym->st_size)
		rank |= 1;
	return rank;
}

static size_t name__underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int sym_cand__cmp(const void *pa, const void *pb)
{
	const struct sym_cand *a = pa, *b = pb;
	size_t ua, ub;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	ua = name__underscores(a->name);
	ub = name__underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(a->name, b->name);
}

struct sym_cands {
	struct sym_cand *v;
	size_t nr, alloc;
};

static int sym_cands__add(struct sym_cands *c, const struct sym_cand *cand)
{
	if (c->nr == c->alloc) {
		size_t alloc = c->alloc ? 2 * c->alloc : 1024;
		struct sym_cand *v = realloc(c->v, alloc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->alloc = alloc;
	}
	c->v[c->nr++] = *cand;
	return 0;
}

/* Per section: is it executable, and where does it end (for stretching size-0 symbols). */
struct scn_info {
	uint64_t end;
	bool exec;
};

static int elf__collect_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
				const struct scn_info *scns, size_t nr_scns, struct sym_cands *c)
{
	bool symtab = shdr->sh_type == SHT_SYMTAB;
	Elf_Data *data;
	size_t nr;
	int err;

	data = elf_getdata(scn, NULL);
	if (!data || !shdr->sh_entsize)
		return 0;
	nr = shdr->sh_size / shdr->sh_entsize;
	/* Entry 0 is the reserved undefined symbol. */
	for (size_t i = 1; i < nr; i++) {
		struct sym_cand cand;
		const char *name;
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		/*
		 * Untyped symbols are taken only inside executable sections: hand-written assembly
		 * often leaves its functions NOTYPE, while outside code they are markers such as
		 * _end or __bss_start that would otherwise swallow addresses.
		 */
		if (type == STT_NOTYPE) {
			if (sym.st_shndx >= nr_scns || !scns[sym.st_shndx].exec)
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		/* Compiler-local labels (.L*) and mapping symbols ($x, $d) are not functions. */
		if (!name || !name[0] || name[0] == '$' || !strncmp(name, ".L", 2))
			continue;
		cand = (struct sym_cand){
		    .start = sym.st_value,
		    .size = sym.st_size,
		    .limit = sym.st_shndx < nr_scns ? scns[sym.st_shndx].end : UINT64_MAX,
		    .name = name,
		    .rank = sym__rank(&sym, symtab),
		};
		err = sym_cands__add(c, &cand);
		if (err)
			return err;
	}
	return 0;
}

/* How far the entry point's code runs: to the next function the CFI has an entry for (the
 * sorted table of .eh_frame_hdr, in the layout every link editor writes: 4-byte entries
 * relative to the section), or 1 byte when that cannot be told. */
#define ENTRY_MAX_SIZE 4096

static uint64_t entry_extent(Elf *elf, uint64_t entry)
{
	const uint8_t *p;
	size_t lo = 0, hi;
	GElf_Shdr sh;
	Elf_Data *d;
	Elf_Scn *scn;
	uint32_t count;
	int32_t loc;

	scn = elf__section(elf, ".eh_frame_hdr", &sh);
	d = scn && sh.sh_type == SHT_PROGBITS ? elf_getdata(scn, NULL) : NULL;
	/* version 1; eh_frame_ptr as 4 bytes; the count as udata4; entries datarel|sdata4. */
	if (!d || !d->d_buf || d->d_size < 12)
		return 1;
	p = d->d_buf;
	if (p[0] != 1 || (p[1] & 0x0f) != 0x0b || p[2] != 0x03 || p[3] != 0x3b)
		return 1;
	memcpy(&count, p + 8, sizeof(count));
	if (count > (d->d_size - 12) / 8)
		return 1;
	hi = count;
	/* The first entry that starts past the entry point. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&loc, p + 12 + mid * 8, sizeof(loc));
		if (sh.sh_addr + (int64_t)loc <= entry)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == count)
		return 1;
	memcpy(&loc, p + 12 + lo * 8, sizeof(loc));
	loc = (int32_t)(sh.sh_addr + (int64_t)loc - entry);
	return loc > 0 && loc <= ENTRY_MAX_SIZE ? (uint64_t)loc : 1;
}

/*
 * The entry point, where no symbol covers it (the dynamic loader and stripped programs keep
 * only .dynsym): "_start", the name the link editor gives it unless told otherwise, up to the
 * next function the CFI knows. That is where every stack of a program's main thread starts.
 */
static int sym_cands__add_entry(Elf *elf, struct sym_cands *c)
{
	struct sym_cand cand = { .limit = UINT64_MAX, .name = "_start", .rank = 0x1f };
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || !eh.e_entry || eh.e_type == ET_REL)
		return 0;
	for (size_t i = 0; i < c->nr; i++) {
		if (c->v[i].start == eh.e_entry ||
		    (c->v[i].start < eh.e_entry && eh.e_entry - c->v[i].start < c->v[i].size))
			return 0;
	}
	cand.start = eh.e_entry;
	cand.size = entry_extent(elf, eh.e_entry);
	return sym_cands__add(c, &cand);
}

/* Sorts the candidates and keeps one per address, and drops labels inside a sized function. */
static size_t sym_cands__dedup(struct sym_cands *c)
{
	size_t kept = 0;

	if (!c->nr)
		return 0;
	qsort(c->v, c->nr, sizeof(*c->v), sym_cand__cmp);
	for (size_t i = 0; i < c->nr; i++) {
		struct sym_cand *cur = &c->v[i];

		if (kept) {
			struct sym_cand *prev = &c->v[kept - 1];

			if (cur->start == prev->start) {
				/* The winner sorted first; an alias may still know the size. */
				if (cur->size > prev->size)
					prev->size = cur->size;
				continue;
			}
			if (!cur->size && prev->size && cur->start < prev->start + prev->size)
				continue;
		}
		c->v[kept++] = *cur;
	}
	c->nr = kept;
	return kept;
}

/*
 * The names kept (one per address) are copied out of the file's string tables, where symbols
 * may share a name or point into the middle of one: a small file can claim gigabytes of them.
 * Real files hold their names about once; a name shared by several symbols costs each of them a
 * table entry (16 or 24 bytes) too. So the copy is bounded by twice the file's size, and by a
 * budget far above the names of ordinary binaries (a few MiB; a browser's, some hundred).
 */
#define ELF_NAMES_MAX		(512u << 20)
#define ELF_NAMES_PER_FILE_BYTE 2

static int elf_file__build_symbols(struct elf_file *ef, struct sym_cands *c, uint64_t file_size)
{
	size_t nr = sym_cands__dedup(c), blob = 0, off = 0;
	uint64_t max = ELF_NAMES_MAX;

	if (file_size && file_size < max / ELF_NAMES_PER_FILE_BYTE)
		max = file_size * ELF_NAMES_PER_FILE_BYTE;
	for (size_t i = 0; i < nr; i++) {
		blob += strlen(c->v[i].name) + 1;
		if (blob > max) {
			pr_debug("symbol names past %" PRIu64 " bytes\n", max);
			return -EFBIG;
		}
	}
	ef->syms = malloc((nr ? nr : 1) * sizeof(*ef->syms));
	ef->names = malloc(blob ? blob : 1);
	if (!ef->syms || !ef->names)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const struct sym_cand *cand = &c->v[i];
		size_t len = strlen(cand->name) + 1;
		uint64_t size = cand->size;

		if (!size) {
			/* Unsized (assembly) symbols run to whatever comes next in their section.
			 */
			uint64_t end = cand->limit;

			if (i + 1 < nr && c->v[i + 1].start < end)
				end = c->v[i + 1].start;
			size = end > cand->start && end != UINT64_MAX ? end - cand->start : 1;
		}
		if (size > UINT32_MAX)
			size = UINT32_MAX;
		ef->syms[i] = (struct elf_sym){
		    .start = cand->start,
		    .size = (uint32_t)size,
		    .name = (uint32_t)off,
		};
		memcpy(ef->names + off, cand->name, len);
		off += len;
	}
	ef->nr_syms = nr;
	ef->names_size = blob ? blob : 1;
	return 0;
}

static int elf_file__load_symbols(struct elf_file *ef, Elf *elf, uint64_t file_size)
{
	struct sym_cands cands = {};
	struct scn_info *scns;
	size_t shnum;
	Elf_Scn *scn = NULL;
	int err;

	if (elf_getshdrnum(elf, &shnum)) {
		pr_debug("elf_getshdrnum: %s\n", elf_errmsg(-1));
		return 0;
	}
	scns = calloc(shnum ? shnum : 1, sizeof(*scns));
	if (!scns)
		return -ENOMEM;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t idx = elf_ndxscn(scn);
		GElf_Shdr shdr;

		if (idx >= shnum || !gelf_getshdr(scn, &shdr))
			continue;
		scns[idx].exec = shdr.sh_flags & SHF_EXECINSTR;
		scns[idx].end = shdr.sh_addr + shdr.sh_size;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		err = elf__collect_symbols(elf, scn, &shdr, scns, shnum, &cands);
		if (err)
			goto out_free;
	}
	err = sym_cands__add_entry(elf, &cands);
	if (!err)
		err = elf_file__build_symbols(ef, &cands, file_size);
out_free:
	free(cands.v);
	free(scns);
	return err;
}

int elf_file__open(int fd, struct elf_file **out)
{
	struct elf_file *ef;
	struct stat st;
	Elf *elf;
	int err;

	err = elf__begin(fd, &elf);
	if (err)
		return err;
	ef = calloc(1, sizeof(*ef));
	if (!ef) {
		err = -ENOMEM;
		goto out_elf_end;
	}
	elf__find_build_id(elf, ef->build_id, sizeof(ef->build_id));
	err = elf_file__load_segments(ef, elf);
	if (err)
		goto out_free;
	/* The size bounds the names copied out (0: unknown, the budget alone does). */
	err = elf_file__load_symbols(ef, elf, fstat(fd, &st) ? 0 : (uint64_t)st.st_size);
	if (err)
		goto out_free;
	elf_end(elf);
	*out = ef;
	return 0;

out_free:
	elf_file__free(ef);
out_elf_end:
	elf_end(elf);
	return err;
}

void elf_file__free(struct elf_file *ef)
{
	if (!ef)
		return;
	free(ef->segs);
	free(ef->syms);
	free(ef->names);
	free(ef);
}

const char *elf_file__build_id(const struct elf_file *ef)
{
	return ef->build_id;
}

int elf_file__offset_to_vaddr(const struct elf_file *ef, uint64_t offset, uint64_t *vaddr)
{
	for (uint32_t i = 0; i < ef->nr_segs; i++) {
		const struct elf_seg *seg = &ef->segs[i];

		if (offset >= seg->offset && offset - seg->offset < seg->filesz) {
			*vaddr = offset - seg->offset + seg->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const char *elf_file__symbol(const struct elf_file *ef, uint64_t vaddr, uint64_t *sym_start)
{
	size_t lo = 0, hi = ef->nr_syms;
	const struct elf_sym *sym;

	/* Find the last symbol starting at or before vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ef->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym = &ef->syms[lo - 1];
	if (vaddr - sym->start >= sym->size)
		return NULL;
	if (sym_start)
		*sym_start = sym->start;
	return ef->names + sym->name;
}

size_t elf_file__nr_symbols(const struct elf_file *ef)
{
	return ef->nr_syms;
}

size_t elf_file__bytes(const struct elf_file *ef)
{
	return sizeof(*ef) + ef->nr_segs * sizeof(*ef->segs) + ef->nr_syms * sizeof(*ef->syms) +
	       ef->names_size;
}
