/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_GPU_CUDAFNS_H
#define AUTOPROF_GPU_CUDAFNS_H

/*
 * The CUDA functions GPU memory profiling probes: one table row per exported name (runtime
 * `libcudart.so.*`, driver `libcuda.so.1`), with what the BPF side does at the call
 * (bpf/gpumem_abi.h's enum gpumem_fn), the `api` label of what it allocates and which kind of
 * memory a pointer of it is. Facts from ../shared/specs/cuda-memory.md.
 */
#include <stdint.h>

#include <linux/types.h>

/* Which memory a pointer names: a free finds its allocation only in the same one. */
enum gpu_space {
	GPU_SPACE_DEVICE = 0, /* device, managed and stream-ordered pointers (one address space) */
	GPU_SPACE_HOST,	      /* pinned host memory */
	GPU_SPACE_VMM,	      /* cuMemCreate's handles */
	GPU_SPACE_TORCH,      /* PyTorch's tensors: inside the segments of the device space */
};

enum cuda_lib {
	CUDA_LIB_RUNTIME = 0,
	CUDA_LIB_DRIVER,
	CUDA_LIB_PYTORCH, /* libc10_cuda.so: USDT probes, not functions */
	CUDA_LIB__MAX,
};

struct cudafn {
	const char *name; /* the exported function, or the USDT probe's name (provider pytorch) */
	uint8_t lib; /* enum cuda_lib */
	uint8_t fn;  /* enum gpumem_fn */
	uint8_t api; /* enum gpu_api (store/profiles.h) of what it allocates or frees */
	uint8_t space;
};

/* Row i of the table (the row the BPF cookie carries), or NULL past its end. */
const struct cudafn *cudafn__row(uint32_t i);

/* The prefixes of the symbols a program looks up with dlsym to reach CUDA and PyTorch after a
 * dlopen (NULL-terminated, static): proc_collector__watch_dlopen's names. */
const char *const *cudafn__dlsym_prefixes(void);
/* Which library a file is by its name (basename): -1 when neither. */
int cudafn__lib_of(const char *path);

/* The probes of one library file: file offsets and BPF cookies (fn | row << 8). */
#define CUDAFN_MAX 64
struct cudafn_sites {
	unsigned long offsets[CUDAFN_MAX];
	__u64 cookies[CUDAFN_MAX];
	uint32_t nr;
	uint32_t nr_alloc; /* of them, calls that allocate */
};

/* The row of lib's USDT probe name, or -1. */
int cudafn__usdt_row(enum cuda_lib lib, const char *name);

/* Finds lib's functions in the .dynsym of the ELF file fd (owned by the caller). 0 (sites->nr
 * may be 0), -ENOEXEC (not ELF) or -ENOMEM. */
int cudafn__find(int fd, enum cuda_lib lib, struct cudafn_sites *sites);

#endif
