// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for /proc/PID/maps lines (src/lib/procmaps.c): the kernel writes them, but
 * a path is any file name a process chose (spaces, newlines cut it in two, " (deleted)"). Each
 * line of the input, without its newline, is parsed in a buffer of its exact size.
 *   make fuzz-maps                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_maps    replays fuzz/corpus/maps/ as an ordinary test
 * Seeds: a real maps file and odd lines.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i <= size;) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t len = (nl ? (size_t)(nl - data) : size) - i;
		/* With its newline when it has one: the parser allows it. */
		size_t with = len + (nl ? 1 : 0);
		char *line = malloc(with + 1);
		struct map_entry e;

		if (!line)
			abort();
		memcpy(line, data + i, with);
		line[with] = '\0';
		if (!maps__parse_line(line, &e)) {
			if (e.end < e.start || !e.path || e.path < line || e.path > line + with ||
			    strlen(e.path) > with)
				abort();
		}
		free(line);
		i += with;
		if (!nl)
			break;
	}
	return 0;
}
