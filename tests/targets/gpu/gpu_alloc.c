// SPDX-License-Identifier: GPL-2.0-only
/*
 * GPU memory profiling target over the CUDA stand-ins (cuda_standin.c, cudart_standin.c): one
 * function per way to allocate, each the direct caller of the CUDA function it tests. Prints
 * its pid, waits for a line on stdin (the profiler attached), allocates, prints one line of JSON
 * with what each function allocated and kept, then waits for another line (or EOF) and exits
 * without freeing what it kept:
 *   {"pid": P, "functions": {"rt_keep": {"api": "runtime", "gpu": "0", "alloc_objects": 3,
 *    "alloc_bytes": 3145728, "inuse_objects": 3, "inuse_bytes": 3145728,
 *    "apis": {"runtime": {...the four counts...}}}, ...}}
 * "gpu" is the device the allocations are on, "" when none is known; "api" the profile's label
 * for the outermost call (see label comments below), "" where nothing was allocated. The sizes
 * are the true ones: a pitched allocation's is the returned pitch times its rows.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_api.h"
#include "target.h"

#define KiB 1024UL
#define MiB (1024UL * KiB)
#define TiB (1024UL * 1024 * MiB)

#define MAX_FUNCTIONS 32
#define MAX_APIS      4
#define MAX_KEPT      64

struct counts {
	unsigned long alloc_objects, alloc_bytes, inuse_objects, inuse_bytes;
};

struct api_counts {
	const char *api;
	struct counts c;
};

/* What one scenario function did, in the order main ran them. */
struct function_record {
	const char *name;
	int gpu; /* -1: no device */
	bool allocated;
	int napis;
	struct api_counts apis[MAX_APIS];
};

static struct function_record functions[MAX_FUNCTIONS];
static int nfunctions;
static struct function_record *current;
/* What is kept stays reachable until exit. */
void *volatile kept[MAX_KEPT];
static int nkept;

static void die(const char *what, int rc)
{
	fprintf(stderr, "gpu_alloc: %s: %d\n", what, rc);
	exit(1);
}

static void check(int rc, const char *what)
{
	if (rc)
		die(what, rc);
}

static void begin(const char *name)
{
	if (nfunctions == MAX_FUNCTIONS)
		die("too many functions", nfunctions);
	current = &functions[nfunctions++];
	current->name = name;
	current->gpu = -1;
}

/* The device of the calling thread's current context, -1 when it has none. */
static int current_gpu(void)
{
	CUcontext ctx;
	CUdevice dev;

	if (cuCtxGetCurrent(&ctx) || !ctx || cuCtxGetDevice(&dev))
		return -1;
	return dev;
}

static struct counts *counts_of(const char *api)
{
	struct api_counts *a;

	for (int i = 0; i < current->napis; i++)
		if (!strcmp(current->apis[i].api, api))
			return &current->apis[i].c;
	if (current->napis == MAX_APIS)
		die("too many apis", current->napis);
	a = &current->apis[current->napis++];
	a->api = api;
	return &a->c;
}

/* Proves the memory is there (host memory, for the stand-ins) and keeps nothing else. */
static void touch(void *p, size_t size)
{
	((volatile char *)p)[0] = 1;
	((volatile char *)p)[size - 1] = 1;
}

static void record_alloc(const char *api, size_t size, int gpu)
{
	struct counts *c = counts_of(api);

	if (current->allocated && current->gpu != gpu)
		die("one function, two devices", gpu);
	current->allocated = true;
	current->gpu = gpu;
	c->alloc_objects++;
	c->alloc_bytes += size;
	c->inuse_objects++;
	c->inuse_bytes += size;
}

static void record_free(const char *api, size_t size)
{
	struct counts *c = counts_of(api);

	c->inuse_objects--;
	c->inuse_bytes -= size;
}

static void keep(void *p)
{
	if (nkept == MAX_KEPT)
		die("too many kept", nkept);
	kept[nkept++] = p;
}

/* Labels: cudaMalloc, cudaMallocPitch, cudaMalloc3D are "runtime". */
__attribute__((noinline)) void rt_keep(void)
{
	void *p;

	begin("rt_keep");
	for (int i = 0; i < 3; i++) {
		check(cudaMalloc(&p, MiB), "rt_keep cudaMalloc");
		touch(p, MiB);
		keep(p);
		record_alloc("runtime", MiB, current_gpu());
	}
}

__attribute__((noinline)) void rt_churn(void)
{
	void *p;

	begin("rt_churn");
	for (int i = 0; i < 10; i++) {
		check(cudaMalloc(&p, 256 * KiB), "rt_churn cudaMalloc");
		touch(p, 256 * KiB);
		record_alloc("runtime", 256 * KiB, current_gpu());
		check(cudaFree(p), "rt_churn cudaFree");
		record_free("runtime", 256 * KiB);
	}
}

__attribute__((noinline)) void rt_pitch(void)
{
	size_t pitch;
	void *p;

	begin("rt_pitch");
	check(cudaMallocPitch(&p, &pitch, 1000, 300), "rt_pitch cudaMallocPitch");
	touch(p, pitch * 300);
	keep(p);
	record_alloc("runtime", pitch * 300, current_gpu());
}

__attribute__((noinline)) void rt_3d(void)
{
	struct cudaExtent extent = { .width = 1000, .height = 20, .depth = 10 };
	struct cudaPitchedPtr pp;

	begin("rt_3d");
	check(cudaMalloc3D(&pp, extent), "rt_3d cudaMalloc3D");
	touch(pp.ptr, pp.pitch * 20 * 10);
	keep(pp.ptr);
	record_alloc("runtime", pp.pitch * 20 * 10, current_gpu());
}

/* cudaMallocManaged, cuMemAllocManaged: "managed". */
__attribute__((noinline)) void rt_managed(void)
{
	void *p;

	begin("rt_managed");
	check(cudaMallocManaged(&p, 512 * KiB, cudaMemAttachGlobal), "rt_managed");
	touch(p, 512 * KiB);
	keep(p);
	record_alloc("managed", 512 * KiB, current_gpu());
}

/* cudaMallocAsync, cudaMallocFromPoolAsync, cuMemAllocAsync: "async". */
__attribute__((noinline)) void rt_async(void)
{
	void *p;

	begin("rt_async");
	check(cudaMallocAsync(&p, 768 * KiB, NULL), "rt_async cudaMallocAsync");
	touch(p, 768 * KiB);
	keep(p);
	record_alloc("async", 768 * KiB, current_gpu());
	check(cudaMallocFromPoolAsync(&p, 128 * KiB, NULL, NULL), "rt_async FromPool");
	touch(p, 128 * KiB);
	record_alloc("async", 128 * KiB, current_gpu());
	check(cudaFreeAsync(p, NULL), "rt_async cudaFreeAsync");
	record_free("async", 128 * KiB);
}

/* cudaMallocHost, cudaHostAlloc, cuMemHostAlloc: "host_pinned", on the current device. */
__attribute__((noinline)) void rt_host(void)
{
	void *p;

	begin("rt_host");
	check(cudaMallocHost(&p, 64 * KiB), "rt_host cudaMallocHost");
	touch(p, 64 * KiB);
	keep(p);
	record_alloc("host_pinned", 64 * KiB, current_gpu());
	check(cudaHostAlloc(&p, 32 * KiB, cudaHostAllocDefault), "rt_host cudaHostAlloc");
	touch(p, 32 * KiB);
	record_alloc("host_pinned", 32 * KiB, current_gpu());
	check(cudaFreeHost(p), "rt_host cudaFreeHost");
	record_free("host_pinned", 32 * KiB);
}

__attribute__((noinline)) void dev1_keep(void)
{
	void *p;

	begin("dev1_keep");
	check(cudaSetDevice(1), "dev1_keep cudaSetDevice(1)");
	check(cudaMalloc(&p, 2 * MiB), "dev1_keep cudaMalloc");
	touch(p, 2 * MiB);
	keep(p);
	record_alloc("runtime", 2 * MiB, current_gpu());
	check(cudaSetDevice(0), "dev1_keep cudaSetDevice(0)");
}

/* A thread of its own that never chose a device: the allocation has none. */
__attribute__((noinline)) void *nodev_keep(void *arg)
{
	void *p;

	(void)arg;
	begin("nodev_keep");
	check(cudaMalloc(&p, 3 * MiB / 2), "nodev_keep cudaMalloc");
	touch(p, 3 * MiB / 2);
	keep(p);
	record_alloc("runtime", 3 * MiB / 2, current_gpu());
	return NULL;
}

/* cuMemAlloc_v2, cuMemAllocPitch_v2: "driver". */
__attribute__((noinline)) void drv_keep(void)
{
	CUcontext ctx;
	CUdeviceptr d;

	begin("drv_keep");
	check(cuDevicePrimaryCtxRetain(&ctx, 0), "drv_keep cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "drv_keep cuCtxSetCurrent");
	check(cuMemAlloc_v2(&d, 3 * MiB), "drv_keep cuMemAlloc_v2");
	touch((void *)(uintptr_t)d, 3 * MiB);
	keep((void *)(uintptr_t)d);
	record_alloc("driver", 3 * MiB, current_gpu());
}

/* The thread's context stack: cuCtxCreate pushes a context on device 1 over device 0's
 * primary one; popping it, or destroying it while current, makes device 0's current again.
 * Both allocations are on device 0, each made before anything asks the driver which device is
 * current (current_gpu() would tell the probes). */
__attribute__((noinline)) void drv_stack(void)
{
	CUcontext mine, popped;
	CUdeviceptr d;

	begin("drv_stack");
	check(cuCtxCreate_v2(&mine, 0, 1), "drv_stack cuCtxCreate_v2");
	check(cuCtxPopCurrent_v2(&popped), "drv_stack cuCtxPopCurrent_v2");
	check(cuMemAlloc_v2(&d, 640 * KiB), "drv_stack cuMemAlloc_v2 after pop");
	touch((void *)(uintptr_t)d, 640 * KiB);
	keep((void *)(uintptr_t)d);
	record_alloc("driver", 640 * KiB, current_gpu());
	check(cuCtxPushCurrent_v2(mine), "drv_stack cuCtxPushCurrent_v2");
	check(cuCtxDestroy_v2(mine), "drv_stack cuCtxDestroy_v2");
	check(cuMemAlloc_v2(&d, 128 * KiB), "drv_stack cuMemAlloc_v2 after destroy");
	touch((void *)(uintptr_t)d, 128 * KiB);
	keep((void *)(uintptr_t)d);
	record_alloc("driver", 128 * KiB, current_gpu());
}

__attribute__((noinline)) void drv_pitch(void)
{
	CUdeviceptr d;
	size_t pitch;

	begin("drv_pitch");
	check(cuMemAllocPitch_v2(&d, &pitch, 4000, 100, 4), "drv_pitch cuMemAllocPitch_v2");
	touch((void *)(uintptr_t)d, pitch * 100);
	keep((void *)(uintptr_t)d);
	record_alloc("driver", pitch * 100, current_gpu());
}

__attribute__((noinline)) void drv_managed(void)
{
	CUdeviceptr d;

	begin("drv_managed");
	check(cuMemAllocManaged(&d, 256 * KiB, CU_MEM_ATTACH_GLOBAL), "drv_managed");
	touch((void *)(uintptr_t)d, 256 * KiB);
	keep((void *)(uintptr_t)d);
	record_alloc("managed", 256 * KiB, current_gpu());
}

__attribute__((noinline)) void drv_async(void)
{
	CUdeviceptr d;

	begin("drv_async");
	check(cuMemAllocAsync(&d, 384 * KiB, NULL), "drv_async cuMemAllocAsync");
	touch((void *)(uintptr_t)d, 384 * KiB);
	keep((void *)(uintptr_t)d);
	record_alloc("async", 384 * KiB, current_gpu());
}

__attribute__((noinline)) void drv_host(void)
{
	void *p;

	begin("drv_host");
	check(cuMemHostAlloc(&p, 96 * KiB, 0), "drv_host cuMemHostAlloc");
	touch(p, 96 * KiB);
	keep(p);
	record_alloc("host_pinned", 96 * KiB, current_gpu());
}

static void vmm_prop(CUmemAllocationProp *prop, int dev)
{
	memset(prop, 0, sizeof(*prop));
	prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop->location.id = dev;
}

/* cuMemCreate: "vmm", on prop.location's device (1 here, while device 0 is current). */
__attribute__((noinline)) void vmm_keep(void)
{
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp prop;
	CUdeviceptr va;

	begin("vmm_keep");
	vmm_prop(&prop, 1);
	check(cuMemCreate(&h, 2 * MiB, &prop, 0), "vmm_keep cuMemCreate");
	check(cuMemAddressReserve(&va, 2 * MiB, 0, 0, 0), "vmm_keep cuMemAddressReserve");
	check(cuMemMap(va, 2 * MiB, 0, h, 0), "vmm_keep cuMemMap");
	touch((void *)(uintptr_t)va, 2 * MiB);
	keep((void *)(uintptr_t)va);
	record_alloc("vmm", 2 * MiB, prop.location.id);
}

__attribute__((noinline)) void vmm_release(void)
{
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp prop;

	begin("vmm_release");
	vmm_prop(&prop, 0);
	check(cuMemCreate(&h, MiB, &prop, 0), "vmm_release cuMemCreate");
	record_alloc("vmm", MiB, prop.location.id);
	check(cuMemRelease(h), "vmm_release cuMemRelease");
	record_free("vmm", MiB);
}

/* Over the stand-ins' 1 TiB limit: both fail and write nothing, so nothing is recorded. */
__attribute__((noinline)) void failing(void)
{
	void *const sentinel = (void *)0x5a5a5a5a;
	void *p = sentinel;
	CUdeviceptr d = 0x5a5a5a5a;
	int rc;

	begin("failing");
	rc = cudaMalloc(&p, 2 * TiB);
	if (rc != cudaErrorMemoryAllocation || p != sentinel)
		die("failing cudaMalloc did not fail cleanly", rc);
	if (cudaGetLastError() != cudaErrorMemoryAllocation)
		die("failing cudaGetLastError", rc);
	rc = cuMemAlloc_v2(&d, 2 * TiB);
	if (rc != CUDA_ERROR_OUT_OF_MEMORY || d != 0x5a5a5a5a)
		die("failing cuMemAlloc_v2 did not fail cleanly", rc);
}

static void print_counts(const struct counts *c)
{
	printf("\"alloc_objects\": %lu, \"alloc_bytes\": %lu, \"inuse_objects\": %lu, "
	       "\"inuse_bytes\": %lu",
	       c->alloc_objects, c->alloc_bytes, c->inuse_objects, c->inuse_bytes);
}

static void print_json(void)
{
	printf("{\"pid\": %d, \"functions\": {", getpid());
	for (int i = 0; i < nfunctions; i++) {
		const struct function_record *f = &functions[i];
		struct counts total = { 0 };
		char gpu[16] = "";

		for (int j = 0; j < f->napis; j++) {
			total.alloc_objects += f->apis[j].c.alloc_objects;
			total.alloc_bytes += f->apis[j].c.alloc_bytes;
			total.inuse_objects += f->apis[j].c.inuse_objects;
			total.inuse_bytes += f->apis[j].c.inuse_bytes;
		}
		if (f->gpu >= 0)
			snprintf(gpu, sizeof(gpu), "%d", f->gpu);
		printf("%s\"%s\": {\"api\": \"%s\", \"gpu\": \"%s\", ", i ? ", " : "", f->name,
		       f->napis == 1 ? f->apis[0].api : f->napis ? "mixed" : "", gpu);
		print_counts(&total);
		printf(", \"apis\": {");
		for (int j = 0; j < f->napis; j++) {
			printf("%s\"%s\": {", j ? ", " : "", f->apis[j].api);
			print_counts(&f->apis[j].c);
			printf("}");
		}
		printf("}}");
	}
	printf("}}\n");
	fflush(stdout);
}

int main(void)
{
	char line[64];
	pthread_t thread;
	int rc;

	/* Goes on at EOF too: a run with no one on stdin still allocates and reports. */
	target_start(true);
	check(cuInit(0), "cuInit");
	check(cudaSetDevice(0), "cudaSetDevice(0)");
	rt_keep();
	rt_churn();
	rt_pitch();
	rt_3d();
	rt_managed();
	rt_async();
	rt_host();
	dev1_keep();
	rc = pthread_create(&thread, NULL, nodev_keep, NULL);
	if (rc)
		die("pthread_create", rc);
	pthread_join(thread, NULL);
	drv_keep();
	drv_stack();
	drv_pitch();
	drv_managed();
	drv_async();
	drv_host();
	vmm_keep();
	vmm_release();
	failing();
	print_json();
	/* Another line or EOF: exit either way, without freeing what was kept. */
	fgets(line, sizeof(line), stdin);
	return 0;
}
