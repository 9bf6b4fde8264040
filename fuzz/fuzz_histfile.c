// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the history's files (src/history/histfile.c): autoprof reads back what
 * it wrote, but a file cut by a crash, a disk that flipped bytes or a file put there by hand
 * must end the read, never mislead it. The input is a file; its records are read as
 * history_read.c does (headers, dictionary, rows), and every row's stack is walked to its root
 * through the dictionary, each name looked up.
 *   make fuzz-histfile                    (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_histfile   replays fuzz/corpus/histfile/ as an ordinary test
 * Seeds: files autoprof wrote (cpu and offcpu records of a few processes), one cut short.
 */
#include <stdint.h>
#include <stdlib.h>

#include "history/histfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct histfile_reader *r = histfile_reader__new();
	size_t off = 0;

	if (!r)
		return 0;
	while (off < size) {
		struct histfile_summary s[HISTFILE_SUMMARY_MAX];
		const struct histfile_row *rows;
		struct histfile_hdr h;
		size_t nr, rec;

		if (histfile__parse_hdr(data + off, size - off, &h, s))
			break;
		rec = histfile__record_size(&h);
		if (rec > size - off ||
		    histfile_reader__body(r, &h, data + off + histfile__body_offset(&h),
					  true))
			break;
		rows = histfile_reader__rows(r, &nr);
		for (size_t i = 0; i < nr; i++) {
			struct histfile_node nd;
			struct histfile_loc l;
			uint32_t node = rows[i].node, depth = 0;

			if (!histfile_reader__str(r, rows[i].comm) || !histfile_reader__str(r, rows[i].exe))
				abort();
			while (node) {
				/* Parents are earlier nodes: a walk ends within the node count. */
				if (!histfile_reader__node(r, node - 1, &nd) ||
				    !histfile_reader__loc(r, nd.loc, &l) ||
				    !histfile_reader__str(r, l.function) ||
				    !histfile_reader__str(r, l.mapping) || ++depth > (1u << 24))
					abort();
				node = nd.parent;
			}
		}
		off += rec;
	}
	histfile_reader__free(r);
	return 0;
}
