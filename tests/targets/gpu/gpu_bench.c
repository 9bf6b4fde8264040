// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a probed CUDA allocation costs: N pairs of cudaMalloc(4096) + cudaFree on device 0, or
 * with "driver" cuMemAlloc_v2 + cuMemFree_v2 in device 0's primary context, or with "torch" a
 * tensor of 4096 bytes from PyTorch's caching allocator (the stand-in lib/libc10_cuda.so, its
 * USDT probes; no CUDA call once its segment is there) and its free, after 1000 pairs of warm-up
 * (the runtime's first call loads the driver). Prints "ns_per_pair X" (CLOCK_MONOTONIC).
 *   gpu_bench N [driver|torch]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_api.h"

#define PAIR_SIZE 4096
#define WARMUP    1000

static void die(const char *what, int rc)
{
	fprintf(stderr, "gpu_bench: %s: %d\n", what, rc);
	exit(1);
}

__attribute__((noinline)) void runtime_pairs(long n)
{
	void *p;
	int rc;

	for (long i = 0; i < n; i++) {
		rc = cudaMalloc(&p, PAIR_SIZE);
		if (rc)
			die("cudaMalloc", rc);
		rc = cudaFree(p);
		if (rc)
			die("cudaFree", rc);
	}
}

__attribute__((noinline)) void driver_pairs(long n)
{
	CUdeviceptr d;
	int rc;

	for (long i = 0; i < n; i++) {
		rc = cuMemAlloc_v2(&d, PAIR_SIZE);
		if (rc)
			die("cuMemAlloc_v2", rc);
		rc = cuMemFree_v2(d);
		if (rc)
			die("cuMemFree_v2", rc);
	}
}

/* PyTorch's allocator, loaded by dlopen as Python loads it. */
static int (*c10_alloc)(void **out, size_t size, int device);
static void (*c10_free)(void *ptr, size_t size);

__attribute__((noinline)) void torch_pairs(long n)
{
	void *p;
	int rc;

	for (long i = 0; i < n; i++) {
		rc = c10_alloc(&p, PAIR_SIZE, 0);
		if (rc)
			die("c10_alloc", rc);
		c10_free(p, PAIR_SIZE);
	}
}

static void load_torch(const char *self)
{
	char path[4096];
	const char *slash = strrchr(self, '/');
	void *lib;

	snprintf(path, sizeof(path), "%.*slib/libc10_cuda.so", slash ? (int)(slash - self + 1) : 0,
		 self);
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "gpu_bench: %s\n", dlerror());
		exit(1);
	}
	*(void **)&c10_alloc = dlsym(lib, "c10_alloc");
	*(void **)&c10_free = dlsym(lib, "c10_free");
	if (!c10_alloc || !c10_free)
		die("dlsym c10_alloc", 0);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	void (*pairs)(long) = runtime_pairs;
	CUcontext ctx;
	long long t0;
	char *end;
	long n;
	int rc;

	if (argc < 2 || argc > 3 ||
	    (argc == 3 && strcmp(argv[2], "driver") && strcmp(argv[2], "torch"))) {
		fprintf(stderr, "usage: gpu_bench N [driver|torch]\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n <= 0) {
		fprintf(stderr, "gpu_bench: N must be a positive integer\n");
		return 2;
	}
	if (argc == 3 && !strcmp(argv[2], "torch")) {
		pairs = torch_pairs;
		load_torch(argv[0]);
	} else if (argc == 3) {
		pairs = driver_pairs;
		if ((rc = cuInit(0)) || (rc = cuDevicePrimaryCtxRetain(&ctx, 0)) ||
		    (rc = cuCtxSetCurrent(ctx)))
			die("driver context", rc);
	} else if ((rc = cudaSetDevice(0))) {
		die("cudaSetDevice", rc);
	}
	pairs(WARMUP);
	t0 = now_ns();
	pairs(n);
	printf("ns_per_pair %.1f\n", (double)(now_ns() - t0) / n);
	return 0;
}
