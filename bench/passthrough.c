// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floor of any LD_PRELOAD allocator shim, for bench/memory.sh: malloc and free interposed
 * and forwarded to the next definition, nothing else. What a run under it costs more than a
 * bare run is what interposition itself costs (an extra jump per call), which no preload shim
 * can avoid. Like the real shim, each pointer starts as a function that resolves them, so the
 * forwarding tests nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

static void *boot_malloc(size_t n);
static void boot_free(void *p);
static void *(*next_malloc)(size_t) = boot_malloc;
static void (*next_free)(void *) = boot_free;

/* dlsym may allocate (its error state, on failure only: malloc and free are always found), so
 * a static block serves it; the bench never frees it. */
static _Alignas(16) char boot[4096];
static int resolving;

static void resolve(void)
{
	void *m, *f;

	resolving = 1;
	m = dlsym(RTLD_NEXT, "malloc");
	f = dlsym(RTLD_NEXT, "free");
	resolving = 0;
	if (m && f) {
		next_malloc = m;
		next_free = f;
	}
}

static void *boot_malloc(size_t n)
{
	if (resolving || (resolve(), next_malloc == boot_malloc))
		return n <= sizeof(boot) ? boot : NULL;
	return next_malloc(n);
}

static void boot_free(void *p)
{
	if (resolving || p == (void *)boot || (resolve(), next_free == boot_free))
		return;
	next_free(p);
}

EXPORT void *malloc(size_t n)
{
	return next_malloc(n);
}

EXPORT void free(void *p)
{
	next_free(p);
}

__attribute__((constructor)) static void init(void)
{
	resolve();
}
