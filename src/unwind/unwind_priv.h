/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UNWIND_PRIV_H
#define AUTOPROF_UNWIND_PRIV_H

/* Between unwind.c, which owns the BPF arrays, and walk_copy.c, which reads them. */
#include <stdint.h>

#include "bpf/unwind_abi.h"

struct unwinder;
struct chunks;

/* An array map's elements sit round_up(value_size, 8) bytes apart in its mmap. */
#define UNWIND_STRIDE(size) (((size) + 7) & ~(size_t)7)
#define UNWIND_FILE_STRIDE UNWIND_STRIDE(sizeof(struct unwind_file))

/*
 * The rows and page index (chunks.h) and unwind_files, mapped: what BPF reads, rewritten under
 * a reader's feet by the builder thread (a stale entry may mislead a walk, never make it read
 * out of bounds: every index is checked against the chunks made and nfiles).
 */
struct unwind_tables {
	const struct chunks *elems;
	const void *files;
	uint32_t nfiles;
};

/* Owned by the unwinder, fixed for its life. */
const struct unwind_tables *unwinder__tables(struct unwinder *u);

/* bpf/unwind_step.h's row search over the mapped arrays: the element index of the file's last
 * row at or before off, or -1 (tests). */
int unwinder__find_row(struct unwinder *u, const struct unwind_file *f, uint32_t off);

#endif
