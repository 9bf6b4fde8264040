// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what a probe's "capture" reads of a binary's DWARF
 * (src/probes/capture.c, through libdw): scopes, variables, types, members, location lists,
 * frame bases and the CFI behind them, translated into BPF reads. The input is an ELF file with
 * .debug_info, served from a memfd; the probe's addresses are the file's own function symbols
 * (their entries, as function probes, and their middles, as line probes), the captures a fixed
 * set of names and member chains.
 *   make fuzz-capture                    (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_capture   replays fuzz/corpus/capture/ as an ordinary test
 * Seeds: tests/targets/probes/capture_target.c built at -O0 and -O2 -g.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_file.h"
#include "probes/probes_priv.h"
#include "symbolize/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);

/*
 * elfutils 0.188's dwarf_getscopes loses 32 bytes of its own on some malformed DWARF (found by
 * this fuzzer; nothing it hands the caller): libdw's to fix, and no reason to stop the fuzzer.
 * libdw has no frame pointers: allocations' stacks are unwound the slow way, so that the
 * suppression sees dwarf_getscopes in them.
 */
const char *__lsan_default_suppressions(void)
{
	return "leak:dwarf_getscopes\n";
}

const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

static const char *const captures[][PROBE_CAPTURES_MAX] = {
	{"len", "r->id", "r->kind", "i"},
	{"total", "twice", "handled", "r.id"},
	{"it->size", "x", "r->name", "len->id"},
};

struct funcs {
	uint64_t start[16], size[16];
	size_t nr;
};

static int func__add(const struct elf_symbol *s, void *ctx)
{
	struct funcs *f = ctx;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_FUNC || !s->sym.st_value)
		return 0;
	f->start[f->nr] = s->sym.st_value;
	f->size[f->nr++] = s->sym.st_size;
	return f->nr == 16;
}

static void check(const struct probe *p, int err, const char *why)
{
	if (err && (err != -EINVAL || !memchr(why, '\0', 512) || !why[0]))
		abort();
	for (size_t s = 0; !err && s < p->nr_sites; s++) {
		if (p->caps[s].nr != p->spec.nr_captures)
			abort();
		for (uint32_t i = 0; i < p->caps[s].nr; i++) {
			const struct probes_capture *c = &p->caps[s].c[i];

			/* Everything BPF is handed stays inside what it can do. */
			if (c->kind > PROBES_CAP_CONST || c->reg >= PROBES_NR_REGS ||
			    c->nr_reads > PROBES_MAX_READS || c->size > 8)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct probe p;
	struct funcs f = {.nr = 0};
	char why[512];
	int fd = fuzz__file(data, size);
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		abort();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	elf__for_each_symbol(elf, ELF_SYMTAB | ELF_DYNSYM, func__add, &f);
	for (size_t k = 0; k < f.nr; k++) {
		for (size_t set = 0; set < sizeof(captures) / sizeof(captures[0]); set++) {
			memset(&p, 0, sizeof(p));
			for (uint32_t i = 0; i < PROBE_CAPTURES_MAX; i++)
				strcpy(p.spec.capture[i], captures[set][i]);
			p.spec.nr_captures = PROBE_CAPTURES_MAX;
			/* A function probe at the entry; a line probe in the middle and at the end. */
			p.kind = set & 1 ? PROBES_KIND_LINE : PROBES_KIND_CALL;
			p.vaddrs[0] = f.start[k] + (p.kind == PROBES_KIND_LINE ? f.size[k] / 2 : 0);
			p.vaddrs[1] = f.start[k] + (f.size[k] ? f.size[k] - 1 : 0);
			p.nr_sites = p.kind == PROBES_KIND_LINE ? 2 : 1;
			why[0] = '\0';
			check(&p, probe__captures(&p, elf, why, sizeof(why)), why);
		}
	}
	elf_end(elf);
	return 0;
}
