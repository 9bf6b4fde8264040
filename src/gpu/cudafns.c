// SPDX-License-Identifier: GPL-2.0-only
/* The CUDA functions probed for GPU memory, and finding them in a library: cudafns.h. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/gpumem_abi.h"
#include "gpu/cudafns.h"
#include "store/profiles.h"
#include "symbolize/elf.h"

#define RT CUDA_LIB_RUNTIME
#define DRV CUDA_LIB_DRIVER
#define DEV GPU_SPACE_DEVICE
#define HOST GPU_SPACE_HOST
#define VMM GPU_SPACE_VMM

/*
 * Frees carry the api of what they free only for the record: the live set finds the
 * allocation by (process, space, pointer). cuMemMap/cuMemUnmap place physical memory that
 * cuMemCreate already counted into a reserved range: they allocate nothing and are not probed.
 */
static const struct cudafn table[] = {
	{ "cudaMalloc", RT, GPUMEM_FN_ALLOC, GPU_API_RUNTIME, DEV },
	{ "cudaMallocPitch", RT, GPUMEM_FN_ALLOC_PITCH, GPU_API_RUNTIME, DEV },
	{ "cudaMalloc3D", RT, GPUMEM_FN_ALLOC_3D, GPU_API_RUNTIME, DEV },
	{ "cudaMallocManaged", RT, GPUMEM_FN_ALLOC, GPU_API_MANAGED, DEV },
	{ "cudaMallocAsync", RT, GPUMEM_FN_ALLOC, GPU_API_ASYNC, DEV },
	{ "cudaMallocAsync_ptsz", RT, GPUMEM_FN_ALLOC, GPU_API_ASYNC, DEV },
	{ "cudaMallocFromPoolAsync", RT, GPUMEM_FN_ALLOC, GPU_API_ASYNC, DEV },
	{ "cudaMallocFromPoolAsync_ptsz", RT, GPUMEM_FN_ALLOC, GPU_API_ASYNC, DEV },
	{ "cudaMallocHost", RT, GPUMEM_FN_ALLOC, GPU_API_HOST_PINNED, HOST },
	{ "cudaHostAlloc", RT, GPUMEM_FN_ALLOC, GPU_API_HOST_PINNED, HOST },
	{ "cudaFree", RT, GPUMEM_FN_FREE, GPU_API_RUNTIME, DEV },
	{ "cudaFreeAsync", RT, GPUMEM_FN_FREE, GPU_API_ASYNC, DEV },
	{ "cudaFreeAsync_ptsz", RT, GPUMEM_FN_FREE, GPU_API_ASYNC, DEV },
	{ "cudaFreeHost", RT, GPUMEM_FN_FREE, GPU_API_HOST_PINNED, HOST },
	{ "cudaSetDevice", RT, GPUMEM_FN_SET_DEVICE, GPU_API_NONE, DEV },
	{ "cuMemAlloc_v2", DRV, GPUMEM_FN_ALLOC, GPU_API_DRIVER, DEV },
	{ "cuMemAllocPitch_v2", DRV, GPUMEM_FN_ALLOC_PITCH, GPU_API_DRIVER, DEV },
	{ "cuMemAllocManaged", DRV, GPUMEM_FN_ALLOC, GPU_API_MANAGED, DEV },
	{ "cuMemAllocAsync", DRV, GPUMEM_FN_ALLOC, GPU_API_ASYNC, DEV },
	{ "cuMemAllocAsync_ptsz", DRV, GPUMEM_FN_ALLOC, GPU_API_ASYNC, DEV },
	{ "cuMemHostAlloc", DRV, GPUMEM_FN_ALLOC, GPU_API_HOST_PINNED, HOST },
	{ "cuMemFree_v2", DRV, GPUMEM_FN_FREE, GPU_API_DRIVER, DEV },
	{ "cuMemFreeAsync", DRV, GPUMEM_FN_FREE, GPU_API_ASYNC, DEV },
	{ "cuMemFreeAsync_ptsz", DRV, GPUMEM_FN_FREE, GPU_API_ASYNC, DEV },
	{ "cuMemFreeHost", DRV, GPUMEM_FN_FREE, GPU_API_HOST_PINNED, HOST },
	{ "cuMemCreate", DRV, GPUMEM_FN_VMM_CREATE, GPU_API_VMM, VMM },
	{ "cuMemRelease", DRV, GPUMEM_FN_FREE, GPU_API_VMM, VMM },
	{ "cuDevicePrimaryCtxRetain", DRV, GPUMEM_FN_CTX_RETAIN, GPU_API_NONE, DEV },
	{ "cuCtxCreate_v2", DRV, GPUMEM_FN_CTX_CREATE, GPU_API_NONE, DEV },
	{ "cuCtxCreate_v3", DRV, GPUMEM_FN_CTX_CREATE_V3, GPU_API_NONE, DEV },
	{ "cuCtxCreate_v4", DRV, GPUMEM_FN_CTX_CREATE_V4, GPU_API_NONE, DEV },
	{ "cuCtxSetCurrent", DRV, GPUMEM_FN_CTX_SET, GPU_API_NONE, DEV },
	{ "cuCtxPushCurrent_v2", DRV, GPUMEM_FN_CTX_PUSH, GPU_API_NONE, DEV },
	{ "cuCtxPopCurrent_v2", DRV, GPUMEM_FN_CTX_POP, GPU_API_NONE, DEV },
	{ "cuCtxDestroy_v2", DRV, GPUMEM_FN_CTX_DESTROY, GPU_API_NONE, DEV },
	{ "cuCtxGetDevice", DRV, GPUMEM_FN_CTX_GET_DEVICE, GPU_API_NONE, DEV },
	/* USDT probes of PyTorch's caching allocator (attached by name, never found in .dynsym) */
	{ "malloc", CUDA_LIB_PYTORCH, GPUMEM_FN_TORCH_MALLOC, GPU_API_PYTORCH, GPU_SPACE_TORCH },
	{ "free", CUDA_LIB_PYTORCH, GPUMEM_FN_TORCH_FREE, GPU_API_PYTORCH, GPU_SPACE_TORCH },
};

#define NR_ROWS (sizeof(table) / sizeof(table[0]))
_Static_assert(NR_ROWS <= CUDAFN_MAX && NR_ROWS < 256, "a row fits the cookie's byte");

const struct cudafn *cudafn__row(uint32_t i)
{
	return i < NR_ROWS ? &table[i] : NULL;
}

/* The names each library is known by: the runtime's major version follows its soname, the
 * driver's file is libcuda.so.<driver version> behind its libcuda.so.1 link. */
static const char *const lib_prefixes[CUDA_LIB__MAX] = {
	[CUDA_LIB_RUNTIME] = "libcudart.so",
	[CUDA_LIB_DRIVER] = "libcuda.so",
	[CUDA_LIB_PYTORCH] = "libc10_cuda.so",
};


/* cuda* and cu* (the runtime's and the driver's entry points, cuGetProcAddress), PyTorch's
 * extension modules (Python's import looks up PyInit_<name>) and c10 (its allocator's C entry
 * points, as the test stand-in exports them). */
static const char *const dlsym_prefixes[] = { "cu", "PyInit_", "c10", NULL };

const char *const *cudafn__dlsym_prefixes(void)
{
	return dlsym_prefixes;
}

int cudafn__lib_of(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (int i = 0; i < CUDA_LIB__MAX; i++)
		if (!strncmp(base, lib_prefixes[i], strlen(lib_prefixes[i])))
			return i;
	return -1;
}

int cudafn__usdt_row(enum cuda_lib lib, const char *name)
{
	for (uint32_t i = 0; i < NR_ROWS; i++)
		if (table[i].lib == lib && !strcmp(table[i].name, name))
			return (int)i;
	return -1;
}

struct find {
	Elf *elf;
	enum cuda_lib lib;
	struct cudafn_sites *sites;
};

static int find__symbol(const struct elf_symbol *s, void *arg)
{
	struct find *f = arg;
	uint64_t off;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_FUNC || s->sym.st_shndx == SHN_UNDEF ||
	    !s->sym.st_value)
		return 0;
	for (uint32_t i = 0; i < NR_ROWS; i++) {
		if (table[i].lib != f->lib || strcmp(table[i].name, s->name))
			continue;
		if (elf__vaddr_to_offset(f->elf, s->sym.st_value, &off))
			return 0;
		/* A name exported at two versions may share one address: one probe. */
		for (uint32_t k = 0; k < f->sites->nr; k++)
			if (f->sites->offsets[k] == off)
				return 0;
		f->sites->offsets[f->sites->nr] = off;
		f->sites->cookies[f->sites->nr++] = table[i].fn | (uint64_t)i << 8;
		f->sites->nr_alloc += table[i].fn == GPUMEM_FN_ALLOC ||
				      table[i].fn == GPUMEM_FN_ALLOC_PITCH ||
				      table[i].fn == GPUMEM_FN_ALLOC_3D ||
				      table[i].fn == GPUMEM_FN_VMM_CREATE;
		return f->sites->nr == CUDAFN_MAX;
	}
	return 0;
}

int cudafn__find(int fd, enum cuda_lib lib, struct cudafn_sites *sites)
{
	struct find f = { .lib = lib, .sites = sites };

	sites->nr = sites->nr_alloc = 0;
	elf_version(EV_CURRENT);
	f.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!f.elf)
		return -ENOEXEC;
	if (elf_kind(f.elf) != ELF_K_ELF) {
		elf_end(f.elf);
		return -ENOEXEC;
	}
	elf__for_each_symbol(f.elf, ELF_DYNSYM, find__symbol, &f);
	elf_end(f.elf);
	return 0;
}
