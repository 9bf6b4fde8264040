// SPDX-License-Identifier: GPL-2.0-only
/*
 * A loop of calls to one small function for bench/probes.sh: the cost of a probed call is the
 * loop's time per call under a probe minus its bare time. Two functions, written in assembly so
 * that their first instruction is fixed:
 *   work_push  begins with push %rbx: the kernel emulates a uprobe there (cheap)
 *   work_test  begins with test %edi,%edi; jle: a uprobe on the test is single-stepped, one on
 *              the jle (which every call passes) is emulated
 * and work_args, in C with DWARF, for the cost of capturing its arguments (x, it->size).
 * Prints its pid, waits for a line on stdin (so probes can be attached first), makes N calls,
 * prints "ns_per_call X".
 *   call_loop work_push|work_test|work_args N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

int work_push(int x);
int work_test(int x);

asm(".text\n"
    ".globl work_push\n"
    ".type work_push, @function\n"
    "work_push:\n"
    "	push %rbx\n"
    "	lea 1(%rdi), %ebx\n"
    "	mov %ebx, %eax\n"
    "	pop %rbx\n"
    "	ret\n"
    ".size work_push, .-work_push\n"
    ".globl work_test\n"
    ".type work_test, @function\n"
    "work_test:\n"
    "	test %edi, %edi\n"
    "	jle 1f\n"
    "	push %rbx\n"
    "	lea 1(%rdi), %ebx\n"
    "	mov %ebx, %eax\n"
    "	pop %rbx\n"
    "	ret\n"
    "1:	xor %eax, %eax\n"
    "	ret\n"
    ".size work_test, .-work_test\n");

volatile long sink;

struct item {
	long id;
	int size;
};

/* At -O0: it begins with push %rbp (emulated), and its parameters are read where the ABI
 * passes them (their stack slots are written after the entry). */
__attribute__((noinline, optimize("O0"))) int work_args(const struct item *it, int x)
{
	return x + it->size;
}

int main(int argc, char **argv)
{
	int (*fn)(int) = argc > 1 && !strcmp(argv[1], "work_test") ? work_test : work_push;
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	struct timespec a, b;

	if (!loop_ready())
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (argc > 1 && !strcmp(argv[1], "work_args")) {
		struct item it = {.id = 1, .size = 3};

		for (long i = 0; i < n; i++)
			sink += work_args(&it, (int)i + 1);
	} else {
		for (long i = 0; i < n; i++)
			sink += fn((int)i + 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	loop_report("ns_per_call", &a, &b, n);
	return 0;
}
