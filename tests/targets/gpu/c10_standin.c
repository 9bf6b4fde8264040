// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stand-in for PyTorch's libc10_cuda.so: a caching allocator that takes 2 MiB segments from
 * cudaMalloc (the runtime stand-in) and hands out tensors inside them without calling CUDA
 * again, firing USDT probes pytorch:malloc(ptr, device, size, stream) and pytorch:free(ptr)
 * guarded by semaphores, as PyTorch 2.1 and later do (<sys/sdt.h>, systemtap-sdt-dev). Only
 * the last tensor handed out is reused when freed: the truth stays simple to tell.
 *   c10_alloc(&ptr, size, device) -> 0 | cuda error;  c10_free(ptr);
 *   c10_reserved(), c10_allocated(): bytes of segments, bytes of live tensors
 */
#define _SDT_HAS_SEMAPHORES 1
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/sdt.h>

#include "cuda_api.h"

#define EXPORT __attribute__((visibility("default"), noinline))
#define SEGMENT (2u << 20)
#define ROUND 512u

/* The probes' semaphores: the kernel counts attached tracers in them (uprobe ref_ctr). */
volatile unsigned short pytorch_malloc_semaphore __attribute__((section(".probes")));
volatile unsigned short pytorch_free_semaphore __attribute__((section(".probes")));

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *seg;	      /* the segment being handed out */
static size_t seg_left;
static size_t reserved, allocated;
static int current = -1; /* the device made current last (PyTorch's guard skips a same one) */

/* A tensor of size bytes on device (made current first), as PyTorch's allocate does. */
EXPORT int c10_alloc(void **out, size_t size, int device)
{
	size_t need = (size + ROUND - 1) / ROUND * ROUND;
	int err = 0;

	pthread_mutex_lock(&lock);
	if (device != current) {
		err = cudaSetDevice(device);
		current = err ? -1 : device;
	}
	if (!err && need > seg_left) {
		size_t n = need > SEGMENT ? need : SEGMENT;
		void *p = NULL;

		err = cudaMalloc(&p, n);
		if (!err) {
			seg = p;
			seg_left = n;
			reserved += n;
		}
	}
	if (!err) {
		*out = seg;
		seg += need;
		seg_left -= need;
		allocated += size;
	}
	pthread_mutex_unlock(&lock);
	if (!err && pytorch_malloc_semaphore)
		STAP_PROBE4(pytorch, malloc, *out, (int8_t)device, size, 0L);
	return err;
}

EXPORT void c10_free(void *ptr, size_t size)
{
	size_t need = (size + ROUND - 1) / ROUND * ROUND;

	pthread_mutex_lock(&lock);
	allocated -= size;
	/* The last tensor handed out is handed out again (a loop of alloc and free stays in one
	 * segment, as in PyTorch's cache); others stay used until the segment is gone. */
	if ((char *)ptr + need == seg) {
		seg = ptr;
		seg_left += need;
	}
	pthread_mutex_unlock(&lock);
	if (pytorch_free_semaphore)
		STAP_PROBE1(pytorch, free, ptr);
}

EXPORT size_t c10_reserved(void)
{
	return reserved;
}

EXPORT size_t c10_allocated(void)
{
	return allocated;
}
