/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_ELF_H
#define AUTOPROF_ELF_H

#include <stddef.h>
#include <stdint.h>

/*
 * What autoprof keeps of one ELF file: its GNU build ID, its PT_LOAD segments (to turn file
 * offsets into ELF virtual addresses) and a compact, sorted table of its function symbols from
 * .symtab and .dynsym (so stripped binaries still name their exported functions). The libelf
 * handle is closed once the tables are copied out.
 */
struct elf_file;

typedef struct Elf Elf;
/* The file offset of an ELF virtual address, through the PT_LOAD holding it. 0 or -ENOENT. */
int elf__vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off);
/*
 * The load base of an object from one of its mappings (its start address and file offset): the
 * PT_LOAD holding that offset maps p_offset at base + p_vaddr, congruent modulo the page size.
 * 0, -ENOENT (no PT_LOAD holds it) or -EINVAL.
 */
int elf__load_base(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *base);

/* Reads only the build ID (cheap). hex gets lower-case hex, NUL-terminated; "" if none. */
int elf__read_build_id(int fd, char *hex, size_t hex_size);

/* Loads fd's tables. fd stays owned by the caller. Returns 0 or a negative errno
 * (-ENOEXEC: not an ELF file). */
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
