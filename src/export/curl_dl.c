// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "otlp: " fmt

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "export/curl_dl.h"
#include "lib/log.h"

/* The soname of libcurl's ABI 4, which every libcurl since 7.16 keeps. */
#define CURL_SONAME "libcurl.so.4"

static const struct {
	const char *name;
	size_t off;
} curl_syms[] = {
    {"curl_global_init", offsetof(struct curl_dl, global_init)},
    {"curl_easy_init", offsetof(struct curl_dl, easy_init)},
    {"curl_easy_setopt", offsetof(struct curl_dl, easy_setopt)},
    {"curl_easy_perform", offsetof(struct curl_dl, easy_perform)},
    {"curl_easy_getinfo", offsetof(struct curl_dl, easy_getinfo)},
    {"curl_easy_strerror", offsetof(struct curl_dl, easy_strerror)},
    {"curl_easy_cleanup", offsetof(struct curl_dl, easy_cleanup)},
    {"curl_slist_append", offsetof(struct curl_dl, slist_append)},
    {"curl_slist_free_all", offsetof(struct curl_dl, slist_free_all)},
    {"curl_getdate", offsetof(struct curl_dl, getdate)},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct curl_dl lib;
static int lib_err;

static void curl_dl__open(void)
{
	void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		pr_warn("cannot load %s (the libcurl4 package): %s\n", CURL_SONAME, dlerror());
		lib_err = -ELIBACC;
		return;
	}
	for (size_t i = 0; i < sizeof(curl_syms) / sizeof(curl_syms[0]); i++) {
		void *fn = dlsym(h, curl_syms[i].name);

		if (!fn) {
			pr_warn("%s: no %s\n", CURL_SONAME, curl_syms[i].name);
			lib_err = -ELIBACC;
			return; /* h stays open: dlclose of a half-used library gains nothing */
		}
		/* POSIX guarantees that a function's address survives the round trip through
		 * void *. */
		*(void **)((char *)&lib + curl_syms[i].off) = fn;
	}
	if (lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		lib_err = -ENOMEM;
}

int curl_dl__get(const struct curl_dl **out)
{
	pthread_once(&once, curl_dl__open);
	if (lib_err)
		return lib_err;
	*out = &lib;
	return 0;
}
