/* DEPS: src/lib/x86insn.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a uprobe goes in a function: probe placement against fixed prologues and against
 * objdump of this machine's glibc.
 */
#include <stdbool.h>
#include <unistd.h>

#include "src/lib/x86insn.h"
#include "testlib.h"

static size_t place(const char *hex, enum x86insn_probe *kind)
{
	uint8_t code[64];
	size_t n = 0;
	unsigned int b;

	while (n < sizeof(code) && sscanf(hex + 3 * n, "%2x", &b) == 1)
		code[n++] = (uint8_t)b;
	return x86insn__probe_offset(code, n, kind);
}

TEST(place_glibc_prologues)
{
	enum x86insn_probe k;

	/* malloc: push %r12 at the entry */
	CHECK_EQ(place("41 54 55 53 48 89 fb", &k), 0);
	CHECK_EQ(k, X86INSN_EMULATED);
	/* free: test %rdi,%rdi; je rel32: the je, which every call passes */
	CHECK_EQ(place("48 85 ff 0f 84 bf 00 00 00 55 48 8d 77 f0", &k), 3);
	CHECK_EQ(k, X86INSN_EMULATED);
	/* posix_memalign: cmpb $0,rip(...); push %r12 */
	CHECK_EQ(place("80 3d 01 02 14 00 00 41 54 49 89 d4", &k), 7);
	CHECK_EQ(k, X86INSN_EMULATED);
	/* aligned_alloc: cmpb $0,rip(...); je rel8 */
	CHECK_EQ(place("80 3d 71 0e 14 00 00 74 07 e9 32 f6 ff ff", &k), 7);
	/* reallocarray: mov %rsi,%rax changes a register: the entry, single-stepped */
	CHECK_EQ(place("48 89 f0 48 f7 e2 48 89 c6", &k), 0);
	CHECK_EQ(k, X86INSN_ENTRY);
	/* endbr64; push %rbp */
	CHECK_EQ(place("f3 0f 1e fa 55 48 89 e5", &k), 4);
	CHECK_EQ(k, X86INSN_EMULATED);
	/* Go's stack check: cmp 0x10(%r14),%rsp; jbe rel32 */
	CHECK_EQ(place("49 3b 66 10 0f 86 0a 01 00 00 48 83 ec 30", &k), 4);
	CHECK_EQ(k, X86INSN_EMULATED);
	/* Go with a big frame: lea first (writes r12): the entry */
	CHECK_EQ(place("4c 8d a4 24 10 ff ff ff 4d 3b 66 10 0f 86", &k), 0);
	CHECK_EQ(k, X86INSN_ENTRY);
	/* a 5-byte nop */
	CHECK_EQ(place("0f 1f 44 00 00 55", &k), 0);
	CHECK_EQ(k, X86INSN_EMULATED);
	/* too many flag-only instructions, or truncated input: the entry */
	CHECK_EQ(place("48 85 ff 48 85 f6 48 85 d2 48 85 c9 55", &k), 0);
	CHECK_EQ(k, X86INSN_ENTRY);
	CHECK_EQ(place("48 85", &k), 0);
	CHECK_EQ(place("", &k), 0);
	CHECK_EQ(k, X86INSN_ENTRY);
}

/* Mnemonics the kernel emulates, and those that only set flags (objdump's AT&T names). */
static bool mnemonic_emulated(const char *m)
{
	return !strncmp(m, "push", 4) || m[0] == 'j' || !strncmp(m, "call", 4) ||
	       !strncmp(m, "nop", 3);
}

static bool mnemonic_flags_only(const char *m, const char *ops)
{
	if (!strcmp(m, "endbr64"))
		return true;
	if (strncmp(m, "test", 4) && strncmp(m, "cmp", 3))
		return false;
	/* register operands, or a RIP-relative memory operand compared with an immediate */
	return !strchr(ops, '(') || (strstr(ops, "(%rip)") && ops[0] == '$');
}

TEST(place_matches_objdump_of_glibc)
{
	static const char *const fns[] = { "malloc", "free", "calloc", "realloc", "reallocarray",
					   "posix_memalign", "aligned_alloc", "memalign",
					   "valloc", "pvalloc" };
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	int checked = 0;

	if (access(libc, R_OK) || system("command -v objdump >/dev/null")) {
		SKIP("no glibc or objdump");
		return;
	}
	for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
		char cmd[512], line[512];
		unsigned long long addr = 0, a;
		uint8_t code[64];
		size_t n = 0, expect = SIZE_MAX, got;
		enum x86insn_probe kind;
		bool decided = false;
		FILE *p;

		snprintf(cmd, sizeof(cmd),
			 "nm -D %s | awk '$3 == \"%s\" || $3 ~ /^%s@@/ {print $1; exit}'", libc,
			 fns[f], fns[f]);
		p = popen(cmd, "r");
		if (!p || !fgets(line, sizeof(line), p) || sscanf(line, "%llx", &addr) != 1) {
			if (p)
				pclose(p);
			continue;
		}
		pclose(p);
		snprintf(cmd, sizeof(cmd), "objdump -d -w --start-address=0x%llx "
			 "--stop-address=0x%llx %s", addr, addr + 32, libc);
		p = popen(cmd, "r");
		CHECK(p);
		while (fgets(line, sizeof(line), p)) {
			char *tab1, *tab2, mn[32] = "", ops[128] = "";
			unsigned int b;
			int used;

			if (sscanf(line, " %llx:", &a) != 1 || !(tab1 = strchr(line, '\t')))
				continue;
			tab2 = strchr(tab1 + 1, '\t');
			for (char *s = tab1 + 1; sscanf(s, "%2x%n", &b, &used) == 1 && n < 64 &&
						 (!tab2 || s < tab2);
			     s += used + 1)
				code[n++] = (uint8_t)b;
			if (!tab2 || decided)
				continue;
			sscanf(tab2 + 1, "%31s %127[^\n]", mn, ops);
			if (mnemonic_emulated(mn)) {
				expect = a - addr;
				decided = true;
			} else if (!mnemonic_flags_only(mn, ops) || a - addr > 16) {
				expect = 0;
				decided = true;
			}
		}
		pclose(p);
		got = x86insn__probe_offset(code, n, &kind);
		if (expect == SIZE_MAX)
			expect = 0;
		if (got != expect) {
			FAILF("%s: probe at +%zu, objdump says +%zu", fns[f], got, expect);
			return;
		}
		checked++;
	}
	CHECK(checked >= 4);
}

int main(void)
{
	RUN(place_glibc_prologues);
	RUN(place_matches_objdump_of_glibc);
	return test_summary();
}
