/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_ELF_H
#define AUTOPROF_ELF_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What autoprof keeps of one ELF file: its GNU build ID, its PT_LOAD segments (to turn file
 * offsets into ELF virtual addresses) and a compact, sorted table of its function symbols from
 * .symtab and .dynsym (so stripped binaries still name their exported functions). The libelf
 * handle is closed once the tables are copied out.
 */
struct elf_file;

/*
 * Helpers on an open libelf handle, for the modules that read a binary themselves (golabels,
 * gosym, debuginfo, dwarf, memory, probes, python, tracectx). Whatever they return that points
 * into the file (sections, names) is owned by elf and valid until elf_end().
 */

/* The file offset of an ELF virtual address, through the PT_LOAD holding it. 0 or -ENOENT. */
int elf__vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off);
/*
 * The load base of an object from one of its mappings (its start address and file offset): the
 * PT_LOAD holding that offset maps p_offset at base + p_vaddr, congruent modulo the page size.
 * 0, -ENOENT (no PT_LOAD holds it) or -EINVAL.
 */
int elf__load_base(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *base);
/*
 * n bytes at ELF virtual address vaddr, copied into buf from the file part of the PT_LOAD that
 * holds all of them. 0, -ENOENT (none does), -EINVAL (no program headers) or -EIO.
 */
int elf__read_vaddr(Elf *elf, uint64_t vaddr, void *buf, size_t n);
/*
 * The first section called name, its header copied into *shdr, or NULL. A SHT_NOBITS section (a
 * debug file's stand-in for an allocated one) is returned like any other: callers that read its
 * bytes check sh_type or the data's d_buf.
 */
Elf_Scn *elf__section(Elf *elf, const char *name, GElf_Shdr *shdr);

/* Which symbol tables elf__for_each_symbol walks. */
#define ELF_SYMTAB (1u << 0) /* .symtab (SHT_SYMTAB) */
#define ELF_DYNSYM (1u << 1) /* .dynsym (SHT_DYNSYM) */

struct elf_symbol {
	const char *name; /* owned by elf; never NULL */
	GElf_Sym sym;
	size_t index; /* in its table; entry 0 (reserved) is never passed */
	size_t table; /* section index of its table: the sh_link of its relocations */
	bool dynsym;  /* from .dynsym, not .symtab */
};

/*
 * Calls fn with every named symbol of elf's tables of the kinds in tables (ELF_SYMTAB,
 * ELF_DYNSYM), tables in section order and symbols in table order, undefined ones included: fn
 * filters. Stops at the first non-zero return of fn and returns it; 0 when all were seen.
 * Symbols of a table that is not there, is empty or is SHT_NOBITS are simply not passed.
 */
int elf__for_each_symbol(Elf *elf, unsigned int tables,
			 int (*fn)(const struct elf_symbol *s, void *ctx), void *ctx);

/* Reads only the build ID (cheap). hex gets lower-case hex, NUL-terminated; "" if none. */
int elf__read_build_id(int fd, char *hex, size_t hex_size);

/* Loads fd's tables. fd stays owned by the caller. Returns 0 or a negative errno
 * (-ENOEXEC: not an ELF file; -EFBIG: its symbol names would take more than twice the file's
 * size or 512 MiB). */
int elf_file__open(int fd, struct elf_file **out);
void elf_file__free(struct elf_file *ef);	/* accepts NULL */

const char *elf_file__build_id(const struct elf_file *ef);
/* Converts an offset in the file to the ELF virtual address of the PT_LOAD segment holding it.
 * Returns 0 or -ENOENT. */
int elf_file__offset_to_vaddr(const struct elf_file *ef, uint64_t offset, uint64_t *vaddr);
/* The function symbol containing vaddr: its name (owned by ef) and start, or NULL. */
const char *elf_file__symbol(const struct elf_file *ef, uint64_t vaddr, uint64_t *sym_start);
size_t elf_file__nr_symbols(const struct elf_file *ef);
/* Heap bytes held, for the cache budget. */
size_t elf_file__bytes(const struct elf_file *ef);

#endif
