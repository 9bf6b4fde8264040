// SPDX-License-Identifier: GPL-2.0-only
/*
 * Cost of walking a copied stack in user space (unwinder__walk_copy, what the preload shim's
 * copies get) next to glibc's backtrace() walking the same stack live (libgcc's DWARF unwinder,
 * its FDE lookups cached after the first call):
 *   uwalk_tool [WALKS]
 * The stack is tests/unit/stackcopy.h's: main, frames without frame pointers, glibc's qsort,
 * a leaf. Prints ns per walk (best of ROUNDS rounds of WALKS walks) for both and their ratio,
 * the mean of COLD_WALKS walks each after evicting the caches (tables, copy and code cold, as
 * at a low sampling rate), and what one mapping-table snapshot (unwinder__proc, a syscall)
 * costs. Needs CAP_BPF.
 */
#include <execinfo.h>
#include <stdio.h>

#include "lib/timeconst.h"
#include "tests/unit/stackcopy.h"

#define ROUNDS 5
/* Cold walks: this many, each after reading a buffer bigger than the caches. */
#define COLD_WALKS 2000
#define COLD_BYTES (64 << 20)

static uint32_t walks = 100000;
static double backtrace_ns;
static int backtrace_frames;

/* At the leaf, in place of capture(): the live stack, walked by backtrace(). */
WITH_FP static void time_backtrace(void)
{
	void *buf[WALK_MAX];

	backtrace(buf, WALK_MAX); /* loads libgcc_s, fills its caches */
	backtrace_ns = 1e18;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();
		double ns;

		for (uint32_t i = 0; i < walks; i++)
			backtrace_frames = backtrace(buf, WALK_MAX);
		ns = (double)(now_ns() - t0) / walks;
		if (ns < backtrace_ns)
			backtrace_ns = ns;
	}
}

int main(int argc, char **argv)
{
	uint64_t pcs[WALK_MAX], t0;
	double walk_ns = 1e18, proc_ns, cold_ns = 0;
	unsigned char *cold;
	struct self e;
	bool truncated = true;
	uint32_t n = 0;
	int err;

	if (argc > 1)
		walks = (uint32_t)strtoul(argv[1], NULL, 10);
	if (!walks)
		walks = 1;
	err = self_init(&e);
	if (err) {
		fprintf(stderr, "uwalk_tool: cannot set up the unwinder: %s (root?)\n",
			strerror(-err));
		return 1;
	}
	sink = chain_a(1);
	for (int r = 0; r < ROUNDS; r++) {
		double ns;

		t0 = now_ns();
		for (uint32_t i = 0; i < walks; i++)
			n = unwinder__walk_copy(e.u, &e.proc, cap.pc, cap.sp, cap.bp, cap.copy,
						cap.len, pcs, WALK_MAX, &truncated);
		ns = (double)(now_ns() - t0) / walks;
		if (ns < walk_ns)
			walk_ns = ns;
	}
	cold = malloc(COLD_BYTES);
	if (cold) {
		uint64_t sum = 0, total = 0;

		memset(cold, 1, COLD_BYTES);
		for (int i = 0; i < COLD_WALKS; i++) {
			for (size_t k = 0; k < COLD_BYTES; k += 64)
				sum += cold[k];
			t0 = now_ns();
			unwinder__walk_copy(e.u, &e.proc, cap.pc, cap.sp, cap.bp, cap.copy, cap.len,
					    pcs, WALK_MAX, &truncated);
			total += now_ns() - t0;
		}
		cold_ns = (double)total / COLD_WALKS;
		sink = (int)sum;
		free(cold);
	}
	t0 = now_ns();
	for (int i = 0; i < 1000; i++)
		unwinder__proc(e.u, (uint32_t)getpid(), &e.proc);
	proc_ns = (double)(now_ns() - t0) / 1000;
	at_leaf = time_backtrace;
	sink = chain_a(1);

	printf("stack copy: %zu bytes from sp to the stack's end\n", cap.len);
	printf("%-34s %10s %8s\n", "walker", "ns/walk", "frames");
	printf("%-34s %10.0f %8u%s\n", "unwinder__walk_copy (copy, tables)", walk_ns, n,
	       truncated ? " (truncated)" : "");
	printf("%-34s %10.0f %8d\n", "backtrace() (live, libgcc DWARF)", backtrace_ns,
	       backtrace_frames);
	printf("%-34s %10.0f %8u\n", "walk_copy, caches flushed", cold_ns, n);
	printf("ratio walk_copy / backtrace: %.2f\n", walk_ns / backtrace_ns);
	printf("unwinder__proc snapshot: %.0f ns\n", proc_ns);
	self_fini(&e);
	return 0;
}
