/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_OBJSYM_H
#define AUTOPROF_OBJSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbolizer.h"

/*
 * Everything autoprof knows to name code in one ELF object, loaded together on first use:
 * the binary's .symtab/.dynsym, the separate debug file's (or MiniDebugInfo's) local symbols,
 * DWARF lines and inlines (from the debug file or the binary), Go's .gopclntab, and demangled
 * names. Results are cached per address, so a warm lookup is one hash probe.
 */
struct objsym;

struct objsym_line {
	const char *function;	 /* demangled when mangled */
	const char *system_name; /* as in the object */
	const char *file;	 /* NULL when unknown */
	uint32_t line;
};

struct objsym_frame {
	uint32_t nr; /* 0: nothing covers the address */
	uint64_t sym_start;
	struct objsym_line lines[SYM_MAX_LINES]; /* inlined callee first, real function last */
};

/* fd (the binary) and debug_fd (its separate debug file, or -1) stay the caller's and must stay
 * open while the objsym lives (libdw reads lazily). Returns 0 or a negative errno
 * (-ENOEXEC: not ELF; -EFBIG: its symbol names are over their budget, see elf_file__open). */
int objsym__load(int fd, int debug_fd, struct objsym **out);
void objsym__free(struct objsym *os); /* accepts NULL */
/* Resolves a file offset. *out is owned by os, valid until the next lookup or objsym__free. */
int objsym__lookup(struct objsym *os, uint64_t offset, const struct objsym_frame **out);
size_t objsym__bytes(const struct objsym *os);
/* Copies more of the DWARF or lets libdw go (dwarf_info__maintain); returns the bytes let go.
 * Serialized with lookups. */
size_t objsym__maintain(struct objsym *os, uint64_t idle_ns);
/* Whether its DWARF is being copied whole (steps left for objsym__maintain). */
bool objsym__copying(const struct objsym *os);
/* How many times the DWARF reader was opened again after a release. */
unsigned long long objsym__reopens(const struct objsym *os);
/* Which sources were found, for metrics and logs. */
enum objsym_source {
	OBJSYM_SYMTAB = 1 << 0,
	OBJSYM_DEBUG_SYMTAB = 1 << 1,
	OBJSYM_MINIDEBUGINFO = 1 << 2,
	OBJSYM_DWARF = 1 << 3,
	OBJSYM_GO = 1 << 4,
	OBJSYM_TOO_LARGE = 1 << 5, /* a source was left out: over its size budget */
};
unsigned int objsym__sources(const struct objsym *os);

#endif
