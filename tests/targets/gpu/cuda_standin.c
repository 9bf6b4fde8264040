// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stand-in for the CUDA driver library, libcuda.so.1, for machines without a GPU: it exports
 * the driver's memory and context entry points under their real (versioned) names with their
 * real signatures, so that the GPU memory profile's uprobes attach and read arguments as they
 * would on the real library, and hands out host memory in place of device memory.
 *
 * What it models, because the profile depends on it:
 *   - two devices, ordinals 0 and 1, each with a primary context; contexts are a per-thread
 *     stack (cuCtxSetCurrent replaces its top, push/pop as named);
 *   - allocation does not need a current context (the real driver's would fail without one):
 *     the runtime stand-in allocates on a thread that never chose a device, so that the profile
 *     has a "no device" case to show;
 *   - any allocation over STANDIN_MAX_ALLOC (1 TiB) fails with CUDA_ERROR_OUT_OF_MEMORY and
 *     writes nothing, so that failures can be tested; a free of NULL or of an address the stand-in
 *     did not hand out (or one of another kind: host vs device) fails with
 *     CUDA_ERROR_INVALID_VALUE;
 *   - cuMemCreate's physical memory is a memfd, which cuMemMap maps into a range that
 *     cuMemAddressReserve reserved: what a program writes through the mapping really lands in
 *     the handle's memory, as on the GPU;
 *   - cuGetProcAddress hands out the addresses of the exported functions themselves, so that a
 *     call the runtime makes through the pointer hits the uprobe on the .dynsym address.
 * Exported functions never call one another (helpers are static): one program call, one probe
 * hit in this library.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_api.h"

/* Out of line and in .dynsym: a uprobe on the exported address must see every call. */
#define CU_EXPORT __attribute__((visibility("default"), noinline))

#define NDEVICES       2
#define DRIVER_VERSION 12040
/* What real device allocations are aligned to, at least. */
#define DEVICE_ALIGN   256
#define PITCH_ALIGN    512
#define CTX_MAGIC      0x63747821u
#define CTX_STACK_MAX  64
#define NBUCKETS       4096

struct standin_ctx {
	unsigned int magic;
	CUdevice device;
	bool primary;
	/* Primary contexts only: cuDevicePrimaryCtxRetain minus cuDevicePrimaryCtxRelease. */
	int refs;
};

enum rec_kind {
	REC_DEVICE = 1 << 0, /* cuMemAlloc, cuMemAllocPitch, cuMemAllocAsync */
	REC_MANAGED = 1 << 1,
	REC_HOST = 1 << 2,
	REC_HANDLE = 1 << 3, /* cuMemCreate: key is the handle, the record's own address */
};

/* One live allocation or handle, keyed by the address (or handle) the caller was given. */
struct rec {
	struct rec *next;
	uintptr_t key;
	size_t size;
	enum rec_kind kind;
	int fd; /* REC_HANDLE: the memfd that stands in for the physical memory */
};

/* A cuMemAddressReserve range: few of them, so a list. */
struct reservation {
	struct reservation *next;
	uintptr_t start;
	size_t size;
};

static struct standin_ctx primary_ctx[NDEVICES] = {
	{ .magic = CTX_MAGIC, .device = 0, .primary = true },
	{ .magic = CTX_MAGIC, .device = 1, .primary = true },
};

/* Guards the records, the reservations and the primary contexts' counts. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec *buckets[NBUCKETS];
static struct reservation *reservations;
static bool initialized;

static __thread CUcontext ctx_stack[CTX_STACK_MAX];
static __thread int ctx_depth;

static bool is_initialized(void)
{
	return __atomic_load_n(&initialized, __ATOMIC_ACQUIRE);
}

static bool ctx_valid(CUcontext ctx)
{
	return ctx && ctx->magic == CTX_MAGIC;
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t round_up(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

static unsigned int bucket_of(uintptr_t key)
{
	return (unsigned int)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 52) % NBUCKETS;
}

/* The link that points at key's record if it is of one of kinds, else NULL. Under lock. */
static struct rec **rec_find_locked(uintptr_t key, unsigned int kinds)
{
	struct rec **link;

	for (link = &buckets[bucket_of(key)]; *link; link = &(*link)->next)
		if ((*link)->key == key)
			return ((*link)->kind & kinds) ? link : NULL;
	return NULL;
}

static void rec_insert(struct rec *r)
{
	unsigned int b = bucket_of(r->key);

	pthread_mutex_lock(&lock);
	r->next = buckets[b];
	buckets[b] = r;
	pthread_mutex_unlock(&lock);
}

/* Unlinks and returns key's record if it is of one of kinds, else NULL. */
static struct rec *rec_take(uintptr_t key, unsigned int kinds)
{
	struct rec **link, *r = NULL;

	pthread_mutex_lock(&lock);
	link = rec_find_locked(key, kinds);
	if (link) {
		r = *link;
		*link = r->next;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/*
 * Host memory standing in for an allocation of size bytes: *out is written only on success.
 * Zero bytes is an invalid value, as on the real driver.
 */
static CUresult mem_get(void **out, size_t size, size_t align, enum rec_kind kind)
{
	struct rec *r;
	void *p;

	if (!out || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (size > STANDIN_MAX_ALLOC)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = aligned_alloc(align, round_up(size, align));
	r = malloc(sizeof(*r));
	if (!p || !r) {
		free(p);
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->key = (uintptr_t)p;
	r->size = size;
	r->kind = kind;
	r->fd = -1;
	rec_insert(r);
	*out = p;
	return CUDA_SUCCESS;
}

static CUresult mem_put(uintptr_t key, unsigned int kinds)
{
	struct rec *r;

	if (!key)
		return CUDA_ERROR_INVALID_VALUE;
	r = rec_take(key, kinds);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	free((void *)r->key);
	free(r);
	return CUDA_SUCCESS;
}

static CUresult dev_alloc(CUdeviceptr *dptr, size_t bytesize, enum rec_kind kind)
{
	void *p;
	CUresult rc;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	rc = mem_get(&p, bytesize, DEVICE_ALIGN, kind);
	if (rc == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return rc;
}

static CUresult ctx_push(CUcontext ctx)
{
	if (ctx_depth == CTX_STACK_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	ctx_stack[ctx_depth++] = ctx;
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	__atomic_store_n(&initialized, true, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = DRIVER_VERSION;
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal < 0 || ordinal >= NDEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = ordinal;
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuDeviceGetCount(int *count)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = NDEVICES;
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= NDEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	primary_ctx[dev].refs++;
	pthread_mutex_unlock(&lock);
	*pctx = &primary_ctx[dev];
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult rc = CUDA_SUCCESS;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= NDEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	if (primary_ctx[dev].refs > 0)
		primary_ctx[dev].refs--;
	else
		rc = CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&lock);
	return rc;
}

CU_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	CUcontext ctx;

	(void)flags;
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= NDEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx->magic = CTX_MAGIC;
	ctx->device = dev;
	if (ctx_push(ctx) != CUDA_SUCCESS) {
		free(ctx);
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pctx = ctx;
	return CUDA_SUCCESS;
}

/* Also leaves the calling thread's stack, as the real one does when it is current there. */
CU_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	int i, j;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx_valid(ctx) || ctx->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	for (i = j = 0; i < ctx_depth; i++)
		if (ctx_stack[i] != ctx)
			ctx_stack[j++] = ctx_stack[i];
	ctx_depth = j;
	ctx->magic = 0;
	free(ctx);
	return CUDA_SUCCESS;
}

/* Replaces the top of the stack (pushes onto an empty one); NULL pops. */
CU_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx) {
		if (ctx_depth)
			ctx_depth--;
		return CUDA_SUCCESS;
	}
	if (!ctx_valid(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!ctx_depth)
		return ctx_push(ctx);
	ctx_stack[ctx_depth - 1] = ctx;
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx_valid(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	return ctx_push(ctx);
}

CU_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	CUcontext ctx;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx = ctx_stack[--ctx_depth];
	if (pctx)
		*pctx = ctx;
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuCtxGetDevice(CUdevice *dev)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = ctx_stack[ctx_depth - 1]->device;
	return CUDA_SUCCESS;
}

CU_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return dev_alloc(dptr, bytesize, REC_DEVICE);
}

/* Rows padded to a multiple of PITCH_ALIGN: the allocation is *pPitch * height bytes. */
CU_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t widthBytes,
				      size_t height, unsigned int elemSize)
{
	size_t pitch, size;
	CUresult rc;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dptr || !pPitch || !widthBytes || !height ||
	    (elemSize != 4 && elemSize != 8 && elemSize != 16))
		return CUDA_ERROR_INVALID_VALUE;
	if (widthBytes > STANDIN_MAX_ALLOC)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pitch = round_up(widthBytes, PITCH_ALIGN);
	if (__builtin_mul_overflow(pitch, height, &size))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = dev_alloc(dptr, size, REC_DEVICE);
	if (rc == CUDA_SUCCESS)
		*pPitch = pitch;
	return rc;
}

CU_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	return dev_alloc(dptr, bytesize, REC_MANAGED);
}

/* The stream is ignored: the memory is there at once, which is a valid ordering. */
CU_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
	(void)stream;
	return dev_alloc(dptr, bytesize, REC_DEVICE);
}

CU_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	(void)flags;
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return mem_get(pp, bytesize, page_size(), REC_HOST);
}

CU_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return mem_put((uintptr_t)dptr, REC_DEVICE | REC_MANAGED);
}

CU_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	(void)stream;
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return mem_put((uintptr_t)dptr, REC_DEVICE | REC_MANAGED);
}

CU_EXPORT CUresult cuMemFreeHost(void *p)
{
	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return mem_put((uintptr_t)p, REC_HOST);
}

/*
 * Pinned device memory on prop->location (a device). The handle is the address of its record:
 * unique among live handles, and may come again after cuMemRelease, like a pointer.
 */
CU_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			       const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct rec *r;
	int fd;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!handle || !prop || !size || flags || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.id < 0 || prop->location.id >= NDEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	if (size > STANDIN_MAX_ALLOC)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = malloc(sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fd = memfd_create("cuda-standin-vmm", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		if (fd >= 0)
			close(fd);
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->key = (uintptr_t)r;
	r->size = size;
	r->kind = REC_HANDLE;
	r->fd = fd;
	rec_insert(r);
	*handle = (CUmemGenericAllocationHandle)r->key;
	return CUDA_SUCCESS;
}

/* What is still mapped stays readable until unmapped, as on the real driver. */
CU_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct rec *r;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = rec_take((uintptr_t)handle, REC_HANDLE);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	close(r->fd);
	free(r);
	return CUDA_SUCCESS;
}

/* Address space only (PROT_NONE, no memory behind it): addr is a hint. */
CU_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
				       CUdeviceptr addr, unsigned long long flags)
{
	size_t page = page_size(), span;
	uintptr_t start, aligned;
	struct reservation *res;
	void *p;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ptr || !size || flags || (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (size > STANDIN_MAX_ALLOC)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (alignment < page)
		alignment = page;
	size = round_up(size, page);
	/* Over-reserve by the alignment, then give back the ends. */
	span = size + alignment - page;
	p = mmap((void *)(uintptr_t)addr, span, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	start = (uintptr_t)p;
	aligned = round_up(start, alignment);
	if (aligned > start)
		munmap(p, aligned - start);
	if (start + span > aligned + size)
		munmap((void *)(aligned + size), start + span - (aligned + size));
	res = malloc(sizeof(*res));
	if (!res) {
		munmap((void *)aligned, size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	res->start = aligned;
	res->size = size;
	pthread_mutex_lock(&lock);
	res->next = reservations;
	reservations = res;
	pthread_mutex_unlock(&lock);
	*ptr = (CUdeviceptr)aligned;
	return CUDA_SUCCESS;
}

/* The reservation that holds [ptr, ptr + size), else NULL. Under lock. */
static struct reservation **reservation_find_locked(uintptr_t ptr, size_t size)
{
	struct reservation **link;

	for (link = &reservations; *link; link = &(*link)->next)
		if (ptr >= (*link)->start && size <= (*link)->size &&
		    ptr - (*link)->start <= (*link)->size - size)
			return link;
	return NULL;
}

CU_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct reservation **link, *res = NULL;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	size = round_up(size, page_size());
	pthread_mutex_lock(&lock);
	link = reservation_find_locked((uintptr_t)ptr, size);
	if (link && (*link)->start == ptr && (*link)->size == size) {
		res = *link;
		*link = res->next;
	}
	pthread_mutex_unlock(&lock);
	if (!res)
		return CUDA_ERROR_INVALID_VALUE;
	munmap((void *)res->start, res->size);
	free(res);
	return CUDA_SUCCESS;
}

/* Maps [offset, offset + size) of the handle's memory at ptr, inside a reservation. */
CU_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	size_t page = page_size();
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	struct rec **link;
	void *p;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (flags || !size || (ptr & (page - 1)) || (offset & (page - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	link = rec_find_locked((uintptr_t)handle, REC_HANDLE);
	if (link && offset <= (*link)->size && size <= (*link)->size - offset &&
	    reservation_find_locked((uintptr_t)ptr, round_up(size, page))) {
		/* Held under the lock: the handle's fd cannot be closed meanwhile. */
		p = mmap((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, (*link)->fd, (off_t)offset);
		rc = p == MAP_FAILED ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* Back to reserved address space. */
CU_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	size_t page = page_size();
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	void *p;

	if (!is_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!size || (ptr & (page - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	size = round_up(size, page);
	pthread_mutex_lock(&lock);
	if (reservation_find_locked((uintptr_t)ptr, size)) {
		p = mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
		rc = p == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/*
 * cuGetProcAddress's table: the name a caller asks for (the base name, as the real runtime
 * asks) and the exported version it gets. The addresses are the exported symbols' own (resolved
 * through .dynsym), so a call through them is a call of the probed function.
 */
static const struct {
	const char *name;
	const char *exported;
	void *fn;
} procs[] = {
#define PROC(base, fn) { base, #fn, (void *)fn }
	PROC("cuInit", cuInit),
	PROC("cuDriverGetVersion", cuDriverGetVersion),
	PROC("cuDeviceGet", cuDeviceGet),
	PROC("cuDeviceGetCount", cuDeviceGetCount),
	PROC("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain),
	PROC("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2),
	PROC("cuCtxCreate", cuCtxCreate_v2),
	PROC("cuCtxDestroy", cuCtxDestroy_v2),
	PROC("cuCtxSetCurrent", cuCtxSetCurrent),
	PROC("cuCtxGetCurrent", cuCtxGetCurrent),
	PROC("cuCtxPushCurrent", cuCtxPushCurrent_v2),
	PROC("cuCtxPopCurrent", cuCtxPopCurrent_v2),
	PROC("cuCtxGetDevice", cuCtxGetDevice),
	PROC("cuMemAlloc", cuMemAlloc_v2),
	PROC("cuMemAllocPitch", cuMemAllocPitch_v2),
	PROC("cuMemAllocManaged", cuMemAllocManaged),
	PROC("cuMemAllocAsync", cuMemAllocAsync),
	PROC("cuMemHostAlloc", cuMemHostAlloc),
	PROC("cuMemFree", cuMemFree_v2),
	PROC("cuMemFreeAsync", cuMemFreeAsync),
	PROC("cuMemFreeHost", cuMemFreeHost),
	PROC("cuMemCreate", cuMemCreate),
	PROC("cuMemRelease", cuMemRelease),
	PROC("cuMemAddressReserve", cuMemAddressReserve),
	PROC("cuMemAddressFree", cuMemAddressFree),
	PROC("cuMemMap", cuMemMap),
	PROC("cuMemUnmap", cuMemUnmap),
	PROC("cuGetProcAddress", cuGetProcAddress_v2),
#undef PROC
};

/* The base name, or for convenience the exported name itself. */
static void *proc_lookup(const char *symbol)
{
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (!strcmp(symbol, procs[i].name) || !strcmp(symbol, procs[i].exported))
			return procs[i].fn;
	return NULL;
}

/* cudaVersion and flags pick among versions and stream variants: there is one of each here. */
CU_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				    unsigned long long flags)
{
	(void)cudaVersion;
	(void)flags;
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = proc_lookup(symbol);
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CU_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				       unsigned long long flags, int *symbolStatus)
{
	(void)cudaVersion;
	(void)flags;
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = proc_lookup(symbol);
	if (symbolStatus)
		*symbolStatus = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS
				     : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
