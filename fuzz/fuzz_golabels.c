// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what golabels.c reads of a Go executable to find a goroutine's pprof
 * labels (src/runtime/golabels.c): the Go version in .go.buildinfo (inline, or through the
 * pre-1.18 pointer to runtime.buildVersion), the struct offsets from DWARF or the version
 * table, runtime.tlsg. The input is the file, served from a memfd; golabels__probe is given no
 * fd (-1), so its cache by file identity stays out of the way. The input is also read as a
 * .go.buildinfo section's contents and as a version string.
 *   make fuzz-golabels                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_golabels    replays fuzz/corpus/golabels/ as an ordinary test
 * Seeds: tests/fixtures/gohello's .go.buildinfo and build ID note alone (objcopy -j), with the
 * version inline (Go 1.19, 1.24) and behind a pointer (as Go 1.16 wrote it).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/runtime/golabels.h"
#include "fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct golabels_offsets o;
	int fd = fuzz__file(data, size);
	char version[32], *s;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		abort();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		golabels__is_go(elf);
		memset(&o, 0x55, sizeof(o));
		if (golabels__probe(-1, elf, &o) != -ENODATA &&
		    !memchr(o.version, '\0', sizeof(o.version)))
			abort();
		elf_end(elf);
	}
	if (!golabels__buildinfo_version(data, size, version, sizeof(version)) &&
	    !memchr(version, '\0', sizeof(version)))
		abort();
	s = strndup((const char *)data, size);
	if (!s)
		abort();
	golabels__version_offsets(s, &o);
	free(s);
	return 0;
}
