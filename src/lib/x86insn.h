/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_X86INSN_H
#define AUTOPROF_LIB_X86INSN_H

/*
 * Where to put a uprobe in a function (an allocator, a latency probe's function) so that the
 * kernel emulates the probed instruction rather than single-stepping it. Pure: decodes bytes,
 * reads nothing.
 */
#include <stddef.h>
#include <stdint.h>

/* How a probe address was chosen. */
enum x86insn_probe {
	X86INSN_EMULATED = 0, /* on an instruction the kernel emulates (push, jcc, jmp, nop...) */
	X86INSN_ENTRY,	      /* none found: the entry, single-stepped (~12 us per hit) */
};

/*
 * Chooses where to probe a function whose first bytes are code[0, len): the first instruction
 * the kernel emulates, skipping at most a few leading instructions that only set flags (test
 * reg,reg; cmp $imm, disp32(%rip); cmp reg,reg; Go's stack check cmp disp8(%r14),%rsp) and so
 * change neither the argument registers, the stack pointer nor the control flow. A probe there
 * sees every call with the arguments and the return address (at %rsp) of the entry, so a
 * return probe can sit there too. Anything else before an emulated instruction: the entry.
 * Returns the offset; *kind says which.
 */
size_t x86insn__probe_offset(const uint8_t *code, size_t len, enum x86insn_probe *kind);

#endif
