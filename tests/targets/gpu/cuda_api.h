/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_CUDA_API_H
#define AUTOPROF_CUDA_API_H

/*
 * The slice of the CUDA driver (libcuda.so.1) and runtime (libcudart.so.12) APIs that the GPU
 * memory profile probes, declared from the API facts in cuda-memory.md: the names the real
 * libraries export (versioned ones included) with the real argument order, so that a uprobe
 * reads the stand-ins' registers exactly as it would the real ones'. One header for the
 * stand-ins and the programs that call them, so that the compiler checks both sides against
 * the same prototypes. The runtime stand-in must not call the driver's functions directly: it
 * gets them through cuGetProcAddress, like the real runtime (it is linked without libcuda, so a
 * direct call fails to link).
 */
#include <stddef.h>

/* Driver API. */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct standin_ctx *CUcontext;
typedef void *CUstream;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_NOT_FOUND = 500,
};

/* cuMemAllocManaged's flags. */
enum {
	CU_MEM_ATTACH_GLOBAL = 1,
	CU_MEM_ATTACH_HOST = 2,
};

/* CUmemAllocationProp.location.type */
enum {
	CU_MEM_LOCATION_TYPE_INVALID = 0,
	CU_MEM_LOCATION_TYPE_DEVICE = 1,
};

/* CUmemAllocationProp.type */
enum {
	CU_MEM_ALLOCATION_TYPE_PINNED = 1,
};

/*
 * 32 bytes: type at 0, requestedHandleTypes at 4, location.type at 8, location.id (the device
 * ordinal when location.type is a device) at 12, win32HandleMetaData at 16, allocFlags at 24.
 */
typedef struct {
	int type;
	int requestedHandleTypes;
	struct {
		int type;
		int id;
	} location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;

_Static_assert(sizeof(CUmemAllocationProp) == 32, "CUmemAllocationProp layout");

/* cuGetProcAddress_v2's *symbolStatus */
enum {
	CU_GET_PROC_ADDRESS_SUCCESS = 0,
	CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
};

CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGet(CUdevice *dev, int ordinal);
CUresult cuDeviceGetCount(int *count);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxGetCurrent(CUcontext *pctx);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext *pctx);
CUresult cuCtxGetDevice(CUdevice *dev);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t widthBytes, size_t height,
			    unsigned int elemSize);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream);
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemFreeHost(void *p);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			     unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
		  unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
			  unsigned long long flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
			     unsigned long long flags, int *symbolStatus);

/* Runtime API. */
typedef int cudaError_t;
typedef void *cudaStream_t;
typedef void *cudaMemPool_t;

enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorInvalidDevice = 101,
};

/* cudaMallocManaged's flags; cudaHostAlloc's default. */
enum {
	cudaMemAttachGlobal = 1,
	cudaMemAttachHost = 2,
	cudaHostAllocDefault = 0,
};

/* 32 bytes, written by cudaMalloc3D: ptr at 0, pitch at 8, xsize at 16, ysize at 24. */
struct cudaPitchedPtr {
	void *ptr;
	size_t pitch;
	size_t xsize;
	size_t ysize;
};

/* 24 bytes, so passed by value in memory: cudaMalloc3D finds it at 8(%rsp) on entry. */
struct cudaExtent {
	size_t width;
	size_t height;
	size_t depth;
};

cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height);
cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent);
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags);
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool,
				    cudaStream_t stream);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);

/* Every stand-in allocation above this fails with out of memory, writing nothing. */
#define STANDIN_MAX_ALLOC (1ULL << 40)

#endif
