// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stand-in for the CUDA runtime library, libcudart.so.12, over the driver stand-in
 * (cuda_standin.c). Like the real runtime it is not linked with libcuda: at first use it
 * dlopens libcuda.so.1 (found through this library's $ORIGIN run path) and takes every driver
 * entry point from cuGetProcAddress_v2 (cuGetProcAddress where only that one is there). Each
 * allocation and free calls the matching driver function through that pointer, so that a
 * profiler sees one program call pass through two probed functions and must count it once, at
 * the runtime's. What it does not do, on purpose: make a context current by itself (a thread
 * that never called cudaSetDevice allocates with no device), or call its own exported functions
 * (cudaMallocHost does not go through cudaHostAlloc): one program call, one probe hit here.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "cuda_api.h"

/* Out of line and in .dynsym: a uprobe on the exported address must see every call. */
#define CUDART_EXPORT __attribute__((visibility("default"), noinline))

/* The CUDA version the runtime asks cuGetProcAddress for: 12.4. */
#define RUNTIME_VERSION 12040
/* The element size cudaMallocPitch and cudaMalloc3D pass to cuMemAllocPitch. */
#define PITCH_ELEM_SIZE 4
#define NDEVICES_MAX    64

/* The driver's entry points, from cuGetProcAddress. */
static struct {
	CUresult (*init)(unsigned int);
	CUresult (*device_get_count)(int *);
	CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
	CUresult (*primary_ctx_release)(CUdevice);
	CUresult (*ctx_set_current)(CUcontext);
	CUresult (*ctx_get_current)(CUcontext *);
	CUresult (*ctx_get_device)(CUdevice *);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*mem_alloc_pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
	CUresult (*mem_alloc_managed)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*mem_alloc_async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*mem_host_alloc)(void **, size_t, unsigned int);
	CUresult (*mem_free)(CUdeviceptr);
	CUresult (*mem_free_async)(CUdeviceptr, CUstream);
	CUresult (*mem_free_host)(void *);
} drv;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static cudaError_t init_error;
/* Devices whose primary context this runtime holds a reference to (cudaSetDevice). */
static pthread_mutex_t retained_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char retained[NDEVICES_MAX];
static __thread cudaError_t last_error;

static CUresult (*get_proc_v2)(const char *, void **, int, unsigned long long, int *);
static CUresult (*get_proc)(const char *, void **, int, unsigned long long);

static int lookup(const char *name, void *slot)
{
	void *fn = NULL;
	int status;
	CUresult rc;

	if (get_proc_v2)
		rc = get_proc_v2(name, &fn, RUNTIME_VERSION, 0, &status);
	else
		rc = get_proc(name, &fn, RUNTIME_VERSION, 0);
	*(void **)slot = fn;
	return rc == CUDA_SUCCESS && fn ? 0 : -1;
}

static void init(void)
{
	void *lib;
	int bad = 0;

	/* Never closed: the entry points live as long as the process. */
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		init_error = cudaErrorInitializationError;
		return;
	}
	*(void **)&get_proc_v2 = dlsym(lib, "cuGetProcAddress_v2");
	if (!get_proc_v2)
		*(void **)&get_proc = dlsym(lib, "cuGetProcAddress");
	if (!get_proc_v2 && !get_proc) {
		init_error = cudaErrorInitializationError;
		return;
	}
	bad |= lookup("cuInit", &drv.init);
	bad |= lookup("cuDeviceGetCount", &drv.device_get_count);
	bad |= lookup("cuDevicePrimaryCtxRetain", &drv.primary_ctx_retain);
	bad |= lookup("cuDevicePrimaryCtxRelease", &drv.primary_ctx_release);
	bad |= lookup("cuCtxSetCurrent", &drv.ctx_set_current);
	bad |= lookup("cuCtxGetCurrent", &drv.ctx_get_current);
	bad |= lookup("cuCtxGetDevice", &drv.ctx_get_device);
	bad |= lookup("cuMemAlloc", &drv.mem_alloc);
	bad |= lookup("cuMemAllocPitch", &drv.mem_alloc_pitch);
	bad |= lookup("cuMemAllocManaged", &drv.mem_alloc_managed);
	bad |= lookup("cuMemAllocAsync", &drv.mem_alloc_async);
	bad |= lookup("cuMemHostAlloc", &drv.mem_host_alloc);
	bad |= lookup("cuMemFree", &drv.mem_free);
	bad |= lookup("cuMemFreeAsync", &drv.mem_free_async);
	bad |= lookup("cuMemFreeHost", &drv.mem_free_host);
	if (bad || drv.init(0) != CUDA_SUCCESS)
		init_error = cudaErrorInitializationError;
}

/* The error is also the thread's last error, as cudaGetLastError reports. */
static cudaError_t fail(cudaError_t err)
{
	last_error = err;
	return err;
}

/* Loads the driver once; every exported function but cudaGetLastError starts here. */
static cudaError_t ready(void)
{
	pthread_once(&init_once, init);
	return init_error;
}

/* A failed driver allocation: nothing was allocated, nothing is written. */
static cudaError_t alloc_result(CUresult rc)
{
	return rc == CUDA_SUCCESS ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

static cudaError_t free_result(CUresult rc)
{
	return rc == CUDA_SUCCESS ? cudaSuccess : fail(cudaErrorInvalidValue);
}

/*
 * The checks every allocation makes first. As on the real runtime, zero bytes succeeds with a
 * NULL pointer and allocates nothing (*zero set, the caller writes NULL and returns).
 */
static cudaError_t alloc_prologue(void *out, size_t size, int *zero)
{
	cudaError_t err = ready();

	if (err)
		return fail(err);
	if (!out)
		return fail(cudaErrorInvalidValue);
	*zero = !size;
	return cudaSuccess;
}

static cudaError_t host_alloc(void **p, size_t size, unsigned int flags)
{
	cudaError_t err;
	void *mem;
	int zero;

	err = alloc_prologue(p, size, &zero);
	if (err || zero) {
		if (!err)
			*p = NULL;
		return err;
	}
	err = alloc_result(drv.mem_host_alloc(&mem, size, flags));
	if (!err)
		*p = mem;
	return err;
}

static cudaError_t async_alloc(void **p, size_t size, cudaStream_t stream)
{
	CUdeviceptr d;
	cudaError_t err;
	int zero;

	err = alloc_prologue(p, size, &zero);
	if (err || zero) {
		if (!err)
			*p = NULL;
		return err;
	}
	err = alloc_result(drv.mem_alloc_async(&d, size, stream));
	if (!err)
		*p = (void *)(uintptr_t)d;
	return err;
}

/* A pitched allocation of width x height: written only on success. */
static cudaError_t pitch_alloc(void **p, size_t *pitch, size_t width, size_t height)
{
	CUdeviceptr d;
	cudaError_t err;
	size_t pt;

	if (!width || !height) {
		*p = NULL;
		*pitch = 0;
		return cudaSuccess;
	}
	err = alloc_result(drv.mem_alloc_pitch(&d, &pt, width, height, PITCH_ELEM_SIZE));
	if (!err) {
		*p = (void *)(uintptr_t)d;
		*pitch = pt;
	}
	return err;
}

CUDART_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	CUdeviceptr d;
	cudaError_t err;
	int zero;

	err = alloc_prologue(devPtr, size, &zero);
	if (err || zero) {
		if (!err)
			*devPtr = NULL;
		return err;
	}
	err = alloc_result(drv.mem_alloc(&d, size));
	if (!err)
		*devPtr = (void *)(uintptr_t)d;
	return err;
}

CUDART_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
					  size_t height)
{
	cudaError_t err = ready();

	if (err)
		return fail(err);
	if (!devPtr || !pitch)
		return fail(cudaErrorInvalidValue);
	return pitch_alloc(devPtr, pitch, width, height);
}

/* One pitched allocation of width x (height * depth): pitch * height * depth bytes. */
CUDART_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr,
				       struct cudaExtent extent)
{
	cudaError_t err = ready();
	size_t rows, pitch;
	void *p;

	if (err)
		return fail(err);
	if (!pitchedDevPtr)
		return fail(cudaErrorInvalidValue);
	if (__builtin_mul_overflow(extent.height, extent.depth, &rows))
		return fail(cudaErrorMemoryAllocation);
	err = pitch_alloc(&p, &pitch, extent.width, rows);
	if (!err) {
		pitchedDevPtr->ptr = p;
		pitchedDevPtr->pitch = pitch;
		pitchedDevPtr->xsize = extent.width;
		pitchedDevPtr->ysize = extent.height;
	}
	return err;
}

CUDART_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	CUdeviceptr d;
	cudaError_t err;
	int zero;

	err = alloc_prologue(devPtr, size, &zero);
	if (err || zero) {
		if (!err)
			*devPtr = NULL;
		return err;
	}
	if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
		return fail(cudaErrorInvalidValue);
	err = alloc_result(drv.mem_alloc_managed(&d, size, flags));
	if (!err)
		*devPtr = (void *)(uintptr_t)d;
	return err;
}

CUDART_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
	return async_alloc(devPtr, size, stream);
}

/* The pool is ignored: the stand-in has one heap. */
CUDART_EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool,
						  cudaStream_t stream)
{
	(void)pool;
	return async_alloc(ptr, size, stream);
}

CUDART_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return host_alloc(ptr, size, cudaHostAllocDefault);
}

CUDART_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	return host_alloc(pHost, size, flags);
}

/* NULL is a no-op, as on the real runtime. */
CUDART_EXPORT cudaError_t cudaFree(void *devPtr)
{
	cudaError_t err = ready();

	if (err)
		return fail(err);
	if (!devPtr)
		return cudaSuccess;
	return free_result(drv.mem_free((CUdeviceptr)(uintptr_t)devPtr));
}

CUDART_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
	cudaError_t err = ready();

	if (err)
		return fail(err);
	if (!devPtr)
		return cudaSuccess;
	return free_result(drv.mem_free_async((CUdeviceptr)(uintptr_t)devPtr, stream));
}

CUDART_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	cudaError_t err = ready();

	if (err)
		return fail(err);
	if (!ptr)
		return cudaSuccess;
	return free_result(drv.mem_free_host(ptr));
}

/*
 * Makes device's primary context current on the calling thread. Retains it on every call, so
 * that a profiler attached after the first still sees which context is which device, and drops
 * the extra reference when the runtime already held one.
 */
CUDART_EXPORT cudaError_t cudaSetDevice(int device)
{
	cudaError_t err = ready();
	CUcontext ctx;
	int count, held;

	if (err)
		return fail(err);
	if (drv.device_get_count(&count) != CUDA_SUCCESS || device < 0 || device >= count ||
	    device >= NDEVICES_MAX)
		return fail(cudaErrorInvalidDevice);
	if (drv.primary_ctx_retain(&ctx, device) != CUDA_SUCCESS)
		return fail(cudaErrorInvalidDevice);
	pthread_mutex_lock(&retained_lock);
	held = retained[device];
	retained[device] = 1;
	pthread_mutex_unlock(&retained_lock);
	if (held)
		drv.primary_ctx_release(device);
	if (drv.ctx_set_current(ctx) != CUDA_SUCCESS)
		return fail(cudaErrorInvalidDevice);
	return cudaSuccess;
}

/* The current context's device; 0 where there is none, as the real runtime answers. */
CUDART_EXPORT cudaError_t cudaGetDevice(int *device)
{
	cudaError_t err = ready();
	CUcontext ctx = NULL;
	CUdevice dev = 0;

	if (err)
		return fail(err);
	if (!device)
		return fail(cudaErrorInvalidValue);
	if (drv.ctx_get_current(&ctx) == CUDA_SUCCESS && ctx &&
	    drv.ctx_get_device(&dev) != CUDA_SUCCESS)
		dev = 0;
	*device = dev;
	return cudaSuccess;
}

CUDART_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t err = ready();

	if (err)
		return fail(err);
	if (!count)
		return fail(cudaErrorInvalidValue);
	if (drv.device_get_count(count) != CUDA_SUCCESS)
		return fail(cudaErrorInitializationError);
	return cudaSuccess;
}

/* Nothing runs asynchronously here. */
CUDART_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	cudaError_t err = ready();

	return err ? fail(err) : cudaSuccess;
}

CUDART_EXPORT cudaError_t cudaGetLastError(void)
{
	cudaError_t err = last_error;

	last_error = cudaSuccess;
	return err;
}
