/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_TESTS_STACKCOPY_H
#define AUTOPROF_TESTS_STACKCOPY_H

/*
 * Copies of this process's own stack for unwinder__walk_copy, as the preload shim makes them
 * (tests/unit/test_unwind.c checks the walks, bench/uwalk_tool.c times them).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/unwind_abi.h"
#include "src/proc/proctab.h"
#include "src/symbolize/symbolizer.h"
#include "src/unwind/unwind.h"

/*
 * Walking copies of this process's own stack. The chain below has no frame pointers (as code
 * built with -O2 -fomit-frame-pointer, and glibc's qsort between them): only the tables get
 * through it. capture() stands where the preload shim would: it takes the registers at its own
 * entry (return address popped) and copies the stack from there up to the thread's stack end.
 */
#define NO_FP __attribute__((noinline, noipa, unused, optimize("omit-frame-pointer")))
#define WITH_FP __attribute__((noinline, noipa, unused, optimize("no-omit-frame-pointer")))
#define COPY_MAX (1 << 20)
#define WALK_MAX 127

struct capture {
	uint64_t pc, sp, bp;
	size_t len;
	unsigned char *copy; /* COPY_MAX bytes */
};

static struct capture cap;
/* Return addresses each function of the chains saw: what the walk must find, in order. */
static uint64_t ra_leaf, ra_cmp, ra_b, ra_a, ra_fp_inner, ra_fp_outer;
/* Set by the test and by main, where a test binary has one. */
static __attribute__((unused)) uint64_t ra_test, ra_main;
static volatile int sink;

static inline uint64_t stack_end(void)
{
	pthread_attr_t attr;
	void *addr = NULL;
	size_t size = 0;

	if (pthread_getattr_np(pthread_self(), &attr))
		return 0;
	pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	return (uint64_t)addr + size;
}

WITH_FP static void capture(void)
{
	uint64_t *fp = __builtin_frame_address(0), end = stack_end();

	cap.pc = (uint64_t)__builtin_return_address(0);
	cap.sp = (uint64_t)(fp + 2);
	cap.bp = fp[0];
	cap.len = end > cap.sp ? end - cap.sp : 0;
	if (cap.len > COPY_MAX)
		cap.len = COPY_MAX;
	memcpy(cap.copy, (const void *)cap.sp, cap.len);
}

/* What the leaf calls (with its return address into the leaf): capture() unless a bench times
 * something else there. */
static void (*at_leaf)(void) = capture;

NO_FP static int leaf(int x)
{
	ra_leaf = (uint64_t)__builtin_return_address(0);
	at_leaf();
	return x * 3 + sink;
}

NO_FP static int cmp_ints(const void *a, const void *b)
{
	ra_cmp = (uint64_t)__builtin_return_address(0);
	return leaf(*(const int *)a - *(const int *)b) * 5 + sink;
}

NO_FP static int chain_b(int n)
{
	int v[2] = { n, n + 1 };

	ra_b = (uint64_t)__builtin_return_address(0);
	qsort(v, 2, sizeof(v[0]), cmp_ints);
	return v[0] * 7 + sink;
}

NO_FP static int chain_a(int n)
{
	ra_a = (uint64_t)__builtin_return_address(0);
	return chain_b(n + 1) * 11 + sink;
}

WITH_FP static int fp_inner(int n)
{
	ra_fp_inner = (uint64_t)__builtin_return_address(0);
	capture();
	return n * 13 + sink;
}

WITH_FP static int fp_outer(int n)
{
	ra_fp_outer = (uint64_t)__builtin_return_address(0);
	return fp_inner(n + 1) * 17 + sink;
}

/* A signal handler's stack: the walk crosses the kernel's signal frame (__restore_rt). */
static uint64_t ra_raiser;

NO_FP static void on_signal(int sig)
{
	sink = leaf(sig) + 1;
}

NO_FP static int raiser(int n)
{
	ra_raiser = (uint64_t)__builtin_return_address(0);
	raise(SIGUSR2);
	return n * 19 + sink;
}

/* An unwinder fed this process's executable mappings (through the proctab, as autoprof does),
 * tables built, and its mapping table as BPF sees it. */
struct self {
	struct symbolizer *sym;
	struct proctab *pt;
	struct unwinder *u;
	struct unwind_proc proc;
};

static inline int self_init(struct self *e)
{
	struct symbolizer_opts opts = { .cache_bytes = 64 << 20 };
	struct timespec ts;
	int err;

	memset(e, 0, sizeof(*e));
	cap.copy = cap.copy ? cap.copy : malloc(COPY_MAX);
	e->u = unwinder__new(&(struct unwinder_opts){ .memory_limit = 16 << 20, .max_processes = 64 },
			     &err);
	e->sym = symbolizer__new(&opts);
	e->pt = e->sym ? proctab__new(e->sym) : NULL;
	if (!cap.copy || !e->u || !e->pt)
		return -ENOMEM;
	if (proctab__observe(e->pt, &(struct proc_observer){ .maps = unwinder__update, .ctx = e->u }))
		return -ENOSPC;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!proctab__get(e->pt, (uint32_t)getpid(), 0, ts.tv_sec * 1000000000ULL + ts.tv_nsec))
		return -ENOMEM;
	unwinder__wait_idle(e->u);
	return unwinder__proc(e->u, (uint32_t)getpid(), &e->proc);
}

static inline void self_fini(struct self *e)
{
	proctab__free(e->pt);
	symbolizer__free(e->sym);
	unwinder__free(e->u);
}

#endif
