// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the CFI parser (src/unwind/cfi.c): the input is one section image, parsed
 * as .eh_frame and again as .debug_frame, then turned into rows through one big segment, with
 * synthesized PLT rows mixed in so the priority and gap logic runs too. Every table must come out
 * strictly sorted.
 *   make fuzz-cfi              (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_cfi   replays fuzz/corpus/cfi/ as an ordinary test
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "unwind/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_one(const uint8_t *data, size_t size, bool debug_frame)
{
	static const struct unwind_rule jmp = { .cfa_type = UNWIND_CFA_RSP, .cfa_off = 8 };
	struct cfi_builder *b = cfi_builder__new();
	struct cfi_table t = {};

	if (!b)
		return;
	cfi_builder__add_segment(b, 0, 1ull << 32, 0);
	cfi_builder__set_data_base(b, 0x200000);
	if (cfi__parse_section(b, data, size, 0x100000, debug_frame) >= 0 &&
	    !cfi_builder__add_lazy_plt(b, 0x1000, 0x100, 11) &&
	    !cfi_builder__add_synthetic(b, 0x1100, 0x40, &jmp) && !cfi_builder__finish(b, &t)) {
		for (uint32_t i = 1; i < t.nr; i++) {
			if (t.rows[i].pc <= t.rows[i - 1].pc)
				abort();
		}
	}
	cfi_table__release(&t);
	cfi_builder__free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_one(data, size, false);
	fuzz_one(data, size, true);
	return 0;
}
