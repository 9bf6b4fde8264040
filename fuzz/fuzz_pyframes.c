// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what autoprof reads of a CPython process's memory to name a Python frame
 * (src/runtime/python.c): a code object's header, its name and file (str objects of each kind)
 * and its line table (3.10's co_linetable, the 3.11+ locations table), through the real reader
 * (pread of an fd at the address) pointed at a memfd holding the input: the input is the
 * process's memory from address 0. Its first bytes say what the sampler would hand over:
 *   [0]      the version: 3.10 + [0] % 4
 *   [8, 16)  the code object's address, [16, 24) the instruction's (little-endian)
 * &PyCode_Type is CODE_TYPE: a code object has it at +8.
 *   make fuzz-pyframes                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_pyframes    replays fuzz/corpus/pyframes/ as an ordinary test
 * Seeds (fuzz/gen_pyframes_corpus.py): a code object of each version with ASCII, UCS-2 and
 * UCS-4 names and a line table.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/runtime/python.h"
#include "fuzz/fuzz_file.h"
#include "symbolize/dso.h"
#include "src/lib/procmaps.h"
#include "src/proc/proctab.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CODE_TYPE 0x7f00c0de0000ull
#define MAX_STR	  512 /* python.c's: at most 4 bytes of UTF-8 per character */


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t code, instr;
	char *name, *file;
	uint32_t line;
	int fd;

	if (size < 24)
		return 0;
	memcpy(&code, data + 8, 8);
	memcpy(&instr, data + 16, 8);
	fd = fuzz__file(data, size);
	if (!python__read_code(fd, 0x030a + data[0] % 4, CODE_TYPE, code, instr, &name, &file,
			       &line)) {
		if (!name || !file || strlen(name) > 4 * MAX_STR || strlen(file) > 4 * MAX_STR)
			abort();
	}
	free(name);
	free(file);
	/* The line tables alone, on the whole input. */
	python__line_310(data, (uint32_t)size, 1, (uint32_t)instr);
	python__line_311(data, (uint32_t)size, 1, (uint32_t)instr);
	return 0;
}
