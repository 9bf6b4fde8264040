// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for perf maps (src/symbolize/perfmap.c): a JIT writes /tmp/perf-PID.map, so
 * its bytes are the process's to choose. The input is the file, served from a memfd through its
 * /proc/self/fd path; lookups go to each line's start, its next byte and its end as the line
 * claims them, and every name found is split as the JIT runtimes' names are (jit_name__split).
 *   make fuzz-perfmap                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_perfmap    replays fuzz/corpus/perfmap/ as an ordinary test
 * Seeds: lines as V8 (node --perf-basic-prof), HotSpot (jcmd Compiler.perfmap) and others write
 * them, overlapping entries, malformed lines.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_file.h"
#include "symbolize/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LOOKUPS 96

static void check_name(const char *name)
{
	size_t len = strlen(name);
	struct jit_name j;

	jit_name__split(name, &j);
	/* The parts point into the name (V8's unnamed functions are called "(anonymous)"). */
	if ((j.function < name || j.function_len > len ||
	     (size_t)(j.function - name) > len - j.function_len) &&
	    (j.function_len != strlen("(anonymous)") ||
	     memcmp(j.function, "(anonymous)", j.function_len)))
		abort();
	if (j.file && (j.file < name || j.file_len > len || (size_t)(j.file - name) > len - j.file_len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t at[MAX_LOOKUPS] = { 0, UINT64_MAX };
	size_t n = 2;
	struct perf_map *pm;
	int fd = fuzz__file(data, size);

	/* START SIZE as each line claims them, read here without trusting them. */
	for (size_t i = 0; i < size && n + 3 <= MAX_LOOKUPS;) {
		char tok[2][20] = {};
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - data) : size;

		for (int t = 0, k = 0; t < 2 && i < end; i++) {
			if (data[i] == ' ') {
				t++;
				k = 0;
			} else if (k < 19) {
				tok[t][k++] = (char)data[i];
			}
		}
		at[n] = strtoull(tok[0], NULL, 16);
		at[n + 1] = at[n] + 1;
		at[n + 2] = at[n] + strtoull(tok[1], NULL, 16);
		n += 3;
		i = end + 1;
	}
	if (perf_map__load(fuzz__file_path(fd), &pm))
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t start;
		const char *name = perf_map__lookup(pm, at[i], &start);

		if (!name)
			continue;
		if (start > at[i] || strlen(name) > size)
			abort();
		check_name(name);
	}
	perf_map__nr_ranges(pm);
	perf_map__bytes(pm);
	perf_map__free(pm);
	return 0;
}
