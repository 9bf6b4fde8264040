// SPDX-License-Identifier: GPL-2.0-only
/*
 * otel_thread_ctx_v1 in libtctx.so loaded with dlopen after start. glibc then gives it static
 * TLS only while its optional surplus lasts (glibc.rtld.optional_static_tls); with the tunable
 * at 0 the variable is in dynamic TLS and has no fixed offset from the thread pointer.
 */
#define TCTX_SETUP
#include <dlfcn.h>
#include <limits.h>

#include "tctx_common.h"

static void (*lib_publish)(void *rec);
static long (*lib_tpoff)(void);

static void ctx_setup(void)
{
	char path[PATH_MAX], *slash;
	ssize_t n;
	void *h;

	/* libtctx.so sits beside this program. */
	n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (n <= 0)
		abort();
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "libtctx.so");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		exit(1);
	}
	lib_publish = (void (*)(void *))dlsym(h, "tctx_publish");
	lib_tpoff = (long (*)(void))dlsym(h, "tctx_tpoff");
	if (!lib_publish || !lib_tpoff)
		abort();
}

static void ctx_publish(struct otel_thread_ctx *rec)
{
	lib_publish(rec);
}

static long ctx_tpoff(void)
{
	return lib_tpoff();
}
