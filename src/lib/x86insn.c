// SPDX-License-Identifier: GPL-2.0-only
/* Where to put a uprobe in a function: just enough x86-64 decoding to find the spot. */
#include <stdbool.h>

#include "lib/x86insn.h"

/* Leading flag-setting instructions skipped at most before giving up on a function. */
#define MAX_SKIP 3

static bool is_rex(uint8_t b)
{
	return (b & 0xf0) == 0x40;
}

/*
 * Length of an instruction the kernel's uprobes emulate rather than single-step (x86
 * branch_setup_xol_ops and push_setup_xol_ops): push reg, nop, jmp/call rel, jcc. 0: not one.
 */
static size_t emulated_len(const uint8_t *c, size_t len)
{
	if (len >= 1 && c[0] >= 0x50 && c[0] <= 0x57)
		return 1; /* push %rax..%rdi */
	if (len >= 2 && (c[0] == 0x41 || c[0] == 0x40) && c[1] >= 0x50 && c[1] <= 0x57)
		return 2; /* push %r8..%r15 */
	if (len >= 1 && c[0] == 0x90)
		return 1; /* nop */
	if (len >= 2 && c[0] >= 0x70 && c[0] <= 0x7f)
		return 2; /* jcc rel8 */
	if (len >= 2 && c[0] == 0xeb)
		return 2; /* jmp rel8 */
	if (len >= 5 && (c[0] == 0xe9 || c[0] == 0xe8))
		return 5; /* jmp/call rel32 */
	if (len >= 6 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f)
		return 6; /* jcc rel32 */
	if (len >= 5 && c[0] == 0x0f && c[1] == 0x1f && c[2] == 0x44)
		return 5; /* nopl 0x0(%rax,%rax,1) */
	return 0;
}

/*
 * Length of an instruction that writes only the flags (no register, memory, stack or control
 * flow change), so a probe after it sees the function's inputs untouched. 0: not one.
 */
static size_t flags_only_len(const uint8_t *c, size_t len)
{
	size_t rex = len >= 1 && is_rex(c[0]);
	const uint8_t *o = c + rex;

	if (len < rex + 2)
		return 0;
	/* test r,r / cmp r,r (register operands only: mod == 3) */
	if ((o[0] == 0x85 || o[0] == 0x84 || o[0] == 0x39 || o[0] == 0x3b) && (o[1] >> 6) == 3)
		return rex + 2;
	/* cmpb/cmpl $imm8, disp32(%rip): the reg field 7 is cmp, rm 5 with mod 0 is RIP-relative */
	if (!rex && (o[0] == 0x80 || o[0] == 0x83) && o[1] == 0x3d && len >= 7)
		return 7;
	/* cmp disp8(reg), reg (no SIB): Go's stack check, cmp 0x10(%r14),%rsp, reads memory the
	 * function reads anyway and writes only the flags */
	if (o[0] == 0x3b && (o[1] >> 6) == 1 && (o[1] & 7) != 4 && len >= rex + 3)
		return rex + 3;
	/* cmp $imm8, reg */
	if (o[0] == 0x83 && (o[1] & 0xf8) == 0xf8 && len >= rex + 3)
		return rex + 3;
	/* endbr64: a no-op to everything but CET */
	if (!rex && len >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		return 4;
	return 0;
}

size_t x86insn__probe_offset(const uint8_t *code, size_t len, enum x86insn_probe *kind)
{
	size_t off = 0;

	for (int skipped = 0; skipped <= MAX_SKIP; skipped++) {
		size_t n;

		if (emulated_len(code + off, len - off)) {
			*kind = X86INSN_EMULATED;
			return off;
		}
		n = flags_only_len(code + off, len - off);
		if (!n)
			break;
		off += n;
	}
	*kind = X86INSN_ENTRY;
	return 0;
}
