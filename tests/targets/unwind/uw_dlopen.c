// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sleeps 1 s, then dlopen()s libuwdl.so (beside this program) and spins in
 * main → dl_caller → dl_entry → dl_leaf, the last two in the library: its unwind rules must be
 * found for a mapping that appeared after the process started.
 *   uw_dlopen SECONDS
 */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>

#include "uw_common.h"

static volatile uint64_t sink;

UW_NOINLINE uint64_t dl_caller(uint64_t (*entry)(uint64_t), double end)
{
	uint64_t x = (uint64_t)getpid();
	uint64_t keep = x * 3;

	asm volatile("" : "+r"(keep));
	while (uw_now() < end) {
		x = entry(x);
		UW_BARRIER();
	}
	return x ^ keep;
}

int main(int argc, char **argv)
{
	double end = uw_start(argc, argv);
	char path[PATH_MAX], *slash;
	uint64_t (*entry)(uint64_t);
	ssize_t n;
	void *h;

	sleep(1);
	n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (n <= 0)
		return 1;
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "libuwdl.so");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	entry = (uint64_t (*)(uint64_t))dlsym(h, "dl_entry");
	if (!entry)
		return 1;
	sink = dl_caller(entry, end);
	UW_BARRIER();
	return 0;
}
