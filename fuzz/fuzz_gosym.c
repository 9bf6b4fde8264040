// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for Go's .gopclntab (src/symbolize/gosym.c): the input is the section's
 * contents, which this file wraps in a minimal ELF executable (a .text at TEXT_ADDR, the
 * .gopclntab, their names), served from a memfd, so the fuzzer spends its time on the table and
 * not on ELF headers (fuzz_elf reaches gosym.c through whole files). Lookups go to each
 * function's entry and the byte after it, as the input's functab claims them (read here with
 * bounds checks; gosym.c must not trust them), and to a few fixed addresses.
 *   make fuzz-gosym                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_gosym    replays fuzz/corpus/gosym/ as an ordinary test
 * Seeds (fuzz/gen_gosym_corpus.py): small tables of each layout read (1.16, 1.18, 1.20; 8- and
 * 4-byte pointers), and crash-* inputs that once failed.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_file.h"
#include "symbolize/gosym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TEXT_ADDR 0x401000ull
#define TEXT_SIZE 0x100000ull
#define MAX_LOOKUPS 64

static const char shstrtab[] = "\0.text\0.gopclntab\0.shstrtab";

/* The ELF image: header, the table, the section names, the section headers. */
static uint8_t *elf_wrap(const uint8_t *tab, size_t size, size_t *len)
{
	size_t tab_off = sizeof(Elf64_Ehdr), str_off = tab_off + size;
	size_t sh_off = (str_off + sizeof(shstrtab) + 7) & ~(size_t)7;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			     EV_CURRENT },
		.e_type = ET_EXEC,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_shoff = sh_off,
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = 4,
		.e_shstrndx = 3,
	};
	Elf64_Shdr sh[4] = {
		{},
		{ .sh_name = 1, .sh_type = SHT_NOBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
		  .sh_addr = TEXT_ADDR, .sh_offset = tab_off, .sh_size = TEXT_SIZE,
		  .sh_addralign = 16 },
		{ .sh_name = 7, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
		  .sh_addr = TEXT_ADDR + TEXT_SIZE, .sh_offset = tab_off, .sh_size = size,
		  .sh_addralign = 1 },
		{ .sh_name = 18, .sh_type = SHT_STRTAB, .sh_offset = str_off,
		  .sh_size = sizeof(shstrtab), .sh_addralign = 1 },
	};
	uint8_t *img;

	*len = sh_off + sizeof(sh);
	img = calloc(1, *len);
	if (!img)
		abort();
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + tab_off, tab, size);
	memcpy(img + str_off, shstrtab, sizeof(shstrtab));
	memcpy(img + sh_off, sh, sizeof(sh));
	return img;
}

static uint64_t rd(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, p, n); /* little-endian host */
	return v;
}

/* Function entries as the functab claims them (1.18+ relative u32s, 1.16 pointers). */
static size_t entries(const uint8_t *d, size_t size, uint64_t *out, size_t max)
{
	uint32_t magic;
	uint64_t nfunc, text, ftab;
	size_t ps, nf, es, n = 0;
	bool rel;

	if (size < 8)
		return 0;
	magic = (uint32_t)rd(d, 4);
	rel = magic == 0xfffffff0u || magic == 0xfffffff1u;
	ps = d[7];
	if ((!rel && magic != 0xfffffffau) || (ps != 4 && ps != 8))
		return 0;
	nf = rel ? 8 : 7;
	if (size < 8 + nf * ps)
		return 0;
	nfunc = rd(d + 8, ps);
	text = rel ? rd(d + 8 + 2 * ps, ps) : 0;
	if (rel && !text)
		text = TEXT_ADDR;
	ftab = rd(d + 8 + (nf - 1) * ps, ps);
	es = rel ? 8 : 2 * ps;
	for (uint64_t i = 0; i <= nfunc && n < max; i++) {
		if (ftab > size || (i + 1) * es > size - ftab)
			break;
		out[n++] = rel ? text + rd(d + ftab + i * es, 4) : rd(d + ftab + i * es, ps);
	}
	return n;
}

/* Each function's stack deltas: ranges inside the function, in order, deltas not absurd. */
static int check_sp(const struct go_func_sp *f, void *ctx)
{
	(void)ctx;
	if (!f->name || f->end < f->entry)
		abort();
	for (size_t i = 0; i < f->nr; i++)
		if (f->pc[i] < f->entry || f->pc[i] > f->end || (i && f->pc[i] <= f->pc[i - 1]))
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t at[MAX_LOOKUPS] = { 0, TEXT_ADDR, TEXT_ADDR + 1, UINT64_MAX };
	size_t len, n = 4;
	struct go_symtab *gs;
	uint8_t *img = elf_wrap(data, size, &len);
	int fd = fuzz__file(img, len);

	free(img);
	n += entries(data, size, at + n, (MAX_LOOKUPS - n) / 2);
	for (size_t i = 4, m = n; i < m; i++)
		at[n++] = at[i] + 1;
	if (go_symtab__open(fd, &gs))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *file, *name;
		uint64_t entry;
		uint32_t line;

		name = go_symtab__lookup(gs, at[i], &entry, &file, &line);
		if (name && (entry > at[i] || strlen(name) > size || (file && strlen(file) > size)))
			abort();
	}
	go_symtab__for_each_sp(gs, check_sp, NULL);
	go_symtab__nr_funcs(gs);
	go_symtab__bytes(gs);
	go_symtab__free(gs);
	return 0;
}
