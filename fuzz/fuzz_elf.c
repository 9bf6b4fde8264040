// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what autoprof reads of an ELF file it finds mapped (any process's, so any
 * bytes): the build ID, the symbol tables (src/symbolize/elf.c) and everything objsym loads from
 * the file besides (src/symbolize/objsym.c: DWARF, .gopclntab, MiniDebugInfo, demangling). The
 * input is the file, served from a memfd. Lookups go to the addresses of the file's own symbols
 * (as the harness reads them through elf__for_each_symbol) and a few others.
 *   make fuzz-elf                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_elf    replays fuzz/corpus/elf/ as an ordinary test
 * Seeds: small binaries (a C program, a shared library, an object file, a stripped one).
 */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_file.h"
#include "symbolize/elf.h"
#include "symbolize/objsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ADDRS 32

struct addrs {
	uint64_t v[MAX_ADDRS];
	size_t nr;
};

static int addr__add(const struct elf_symbol *s, void *ctx)
{
	struct addrs *a = ctx;

	/* Every name handed over is a string libelf checked: reading it must be safe. */
	if (strlen(s->name) > (size_t)1 << 30)
		abort();
	a->v[a->nr++] = s->sym.st_value;
	return a->nr == MAX_ADDRS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addrs a = { .v = { 0, 0x1000, 0x401000 }, .nr = 3 };
	int fd = fuzz__file(data, size);
	char hex[2 * 64 + 1];
	struct elf_file *ef;
	struct objsym *os;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		abort();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		elf__for_each_symbol(elf, ELF_SYMTAB | ELF_DYNSYM, addr__add, &a);
		elf_end(elf);
	}
	if (!elf__read_build_id(fd, hex, sizeof(hex)) && strlen(hex) >= sizeof(hex))
		abort();
	if (!elf_file__open(fd, &ef)) {
		for (size_t i = 0; i < a.nr; i++) {
			uint64_t start, vaddr;
			const char *name = elf_file__symbol(ef, a.v[i], &start);

			if (name && (start > a.v[i] || strlen(name) > size))
				abort();
			elf_file__offset_to_vaddr(ef, a.v[i], &vaddr);
		}
		elf_file__bytes(ef);
		elf_file__free(ef);
	}
	if (!objsym__load(fd, -1, &os)) {
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		for (size_t i = 0; elf && i < a.nr; i++) {
			const struct objsym_frame *f;
			uint64_t off;

			if (elf__vaddr_to_offset(elf, a.v[i], &off))
				off = a.v[i];
			if (!objsym__lookup(os, off, &f) && f->nr > SYM_MAX_LINES)
				abort();
			/* Again: now from the cache. */
			objsym__lookup(os, off, &f);
		}
		if (elf)
			elf_end(elf);
		objsym__bytes(os);
		objsym__free(os);
	}
	return 0;
}
