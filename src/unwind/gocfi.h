/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UNWIND_GOCFI_H
#define AUTOPROF_UNWIND_GOCFI_H

/*
 * Unwind rows for Go code, from the stack deltas (pcsp tables) of the executable's .gopclntab:
 * Go emits no .eh_frame for its own code, and leaves leaf functions without a frame pointer,
 * so a frame-pointer walk loses a frameless function's caller.
 */
#include "unwind/cfi.h"

/*
 * Adds to b the rows of every Go function in the ELF file open at fd (the caller's). Returns
 * the number of functions added (0: not a Go binary, or a table gosym cannot read), or -ENOMEM.
 */
int gocfi__add(struct cfi_builder *b, int fd);

#endif
