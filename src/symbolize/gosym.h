/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_GOSYM_H
#define AUTOPROF_GOSYM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Function names, files and lines of a Go executable from its .gopclntab, the table the Go
 * runtime itself uses for tracebacks. It survives -ldflags=-s (which drops .symtab), so Go
 * binaries stay symbolized when stripped. Layouts of Go 1.16 and 1.18+ (1.20+ included) are read.
 * Addresses are ELF virtual addresses (p_vaddr space).
 */
struct go_symtab;

/* Loads the .gopclntab of the ELF file fd (which stays the caller's). Returns 0 or a negative
 * errno: -ENOEXEC not an ELF file, -ENODATA not a Go binary, -ENOTSUP a pclntab layout older than
 * Go 1.16 or a big-endian file, -EINVAL a malformed table (or one past the file's end), -EFBIG a
 * table over 256 MiB (it is copied whole). */
int go_symtab__open(int fd, struct go_symtab **out);
void go_symtab__free(struct go_symtab *gs);	/* accepts NULL */

/*
 * The function containing vaddr: its name (owned by gs) and *entry. *file and *line get the source
 * position of vaddr when the table has one, else NULL and 0. Returns NULL when vaddr is in no
 * function. entry, file and line may be NULL.
 */
const char *go_symtab__lookup(const struct go_symtab *gs, uint64_t vaddr, uint64_t *entry,
			      const char **file, uint32_t *line);
size_t go_symtab__nr_funcs(const struct go_symtab *gs);
/* Heap bytes held, for the cache budget. */
size_t go_symtab__bytes(const struct go_symtab *gs);

#endif
