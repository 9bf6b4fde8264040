/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_GOSYM_H
#define AUTOPROF_GOSYM_H

#include <stdbool.h>
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

/*
 * The stack deltas of one function, from its pcsp table: over [pc[i], pc[i + 1]) (the last
 * range ends at end) the function holds delta[i] bytes of stack below the sp it was entered
 * with, its return address not counted. topframe: the outermost frame of a goroutine or
 * thread (runtime.goexit, mstart, rt0_go); spwrite: it writes sp outright (assembly stack
 * switches), its deltas say nothing of where its caller's frame is.
 */
struct go_func_sp {
	const char *name; /* owned by the table */
	uint64_t entry, end;
	const uint64_t *pc;
	const int32_t *delta;
	size_t nr;
	bool topframe, spwrite;
};

/*
 * Calls fn for every function with a readable pcsp table, in address order, until fn returns
 * nonzero (returned). Functions whose table is malformed or missing are skipped. Returns 0,
 * fn's value, or -ENOMEM.
 */
int go_symtab__for_each_sp(const struct go_symtab *gs,
			   int (*fn)(const struct go_func_sp *f, void *ctx), void *ctx);
/* Heap bytes held, for the cache budget. */
size_t go_symtab__bytes(const struct go_symtab *gs);

#endif
