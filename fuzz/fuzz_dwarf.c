// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for DWARF lines and inlined frames (src/symbolize/dwarf.c, through libdw):
 * the input is an ELF file with .debug_info, served from a memfd. Lookups go to the addresses
 * of the file's own symbols, their next bytes, and a few fixed ones.
 *   make fuzz-dwarf                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_dwarf    replays fuzz/corpus/dwarf/ as an ordinary test
 * Seeds: tests/fixtures/inlines.c built as a program (DWARF 5), as an object (DWARF 4 and split
 * DWARF), and a C++ object.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_file.h"
#include "symbolize/dwarf.h"
#include "symbolize/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ADDRS 48

struct addrs {
	uint64_t v[MAX_ADDRS];
	size_t nr;
};

static int addr__add(const struct elf_symbol *s, void *ctx)
{
	struct addrs *a = ctx;

	a->v[a->nr++] = s->sym.st_value;
	a->v[a->nr++] = s->sym.st_value + (s->sym.st_size ? s->sym.st_size / 2 : 1);
	return a->nr >= MAX_ADDRS - 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addrs a = { .v = { 0, 0x1000, 0x401000 }, .nr = 3 };
	int fd = fuzz__file(data, size);
	struct dwarf_info *di;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		abort();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		elf__for_each_symbol(elf, ELF_SYMTAB | ELF_DYNSYM, addr__add, &a);
		elf_end(elf);
	}
	/* Both ways of copying (the input's parity picks): whole, or a CU at a time with libdw
	 * let go and opened again between lookups. */
	if (dwarf_info__open(fd, size & 1 ? DWARF_WHOLE_MAX : 0, &di))
		return 0;
	for (size_t i = 0; i < a.nr; i++) {
		struct dwarf_frame f;

		if (i & 1)
			dwarf_info__maintain(di, 0);
		if (dwarf_info__lookup(di, a.v[i], &f))
			continue;
		if (!f.nr || f.nr > DWARF_MAX_INLINE)
			abort();
		for (uint32_t k = 0; k < f.nr; k++) {
			/* Every string handed out must be readable to its end. */
			if (f.lines[k].function && strlen(f.lines[k].function) > (size_t)1 << 30)
				abort();
			if (f.lines[k].file && strlen(f.lines[k].file) > (size_t)1 << 30)
				abort();
		}
	}
	dwarf_info__bytes(di);
	dwarf_info__free(di);
	return 0;
}
