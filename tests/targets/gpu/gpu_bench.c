// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a probed CUDA allocation costs: N pairs of cudaMalloc(4096) + cudaFree on device 0, or
 * with "driver" cuMemAlloc_v2 + cuMemFree_v2 in device 0's primary context, after 1000 pairs of
 * warm-up (the runtime's first call loads the driver). Prints "ns_per_pair X" (CLOCK_MONOTONIC).
 *   gpu_bench N [driver]
 */
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

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "driver"))) {
		fprintf(stderr, "usage: gpu_bench N [driver]\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n <= 0) {
		fprintf(stderr, "gpu_bench: N must be a positive integer\n");
		return 2;
	}
	if (argc == 3) {
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
