/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_MEMORY_MEMSITES_H
#define AUTOPROF_MEMORY_MEMSITES_H

/*
 * Where memory profiling probes a process, in one file it maps: the preload shim (its flush
 * marker, and where its record is), Go's sampled path (runtime.mProf_Malloc, freeSpecial, with
 * the runtime's functions and MemProfileRate), HotSpot's AllocTracer (libjvm.so's .symtab), or
 * the allocator functions the file defines
 * (.dynsym, and .symtab for a static executable). Each probe sits on the function's first
 * instruction the kernel emulates (x86insn__probe_offset). Reads the ELF file only: no BPF, no
 * process.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpf/memory_abi.h"

struct map_entry;

enum memsites_mode {
	MEMSITES_ATTACH,  /* the allocator's functions */
	MEMSITES_PRELOAD, /* the preload shim */
	MEMSITES_GO,	  /* Go's runtime */
	MEMSITES_JAVA,	  /* HotSpot's libjvm.so */
};

struct memsite {
	unsigned long offset; /* in the file */
	uint64_t fn;	      /* the cookie: enum memory_fn, MEMORY_COOKIE_* */
	bool ret;	      /* its return is probed too */
};

struct memsite_range {
	uint64_t lo, hi;
};

#define MEMSITES_MAX 16

struct memsites {
	enum memsites_mode mode;
	int nr;
	struct memsite sites[MEMSITES_MAX];
	unsigned int emulated, entry; /* probes placed on an emulated instruction, at an entry */
	uint64_t preload_rec;	      /* preload: the shim's record, at its run-time address */
	/* Go, at link-time addresses: runtime.MemProfileRate (0: unknown), the executable
	 * segment's p_offset - p_vaddr (with its mapping, the load bias), and the runtime
	 * package's functions, sorted and merged (owned: memsites__release) */
	uint64_t go_rate_vaddr;
	int64_t go_text_delta;
	struct memsite_range *go_rt;
	size_t nr_go_rt;
	/* HotSpot: the file is a libjvm.so (it exports gHotSpotVMStructs) whose symbol table
	 * lacks AllocTracer: its JVM's allocations cannot be probed (nr is 0) */
	bool jvm_unprobed;
};

/*
 * Fills *ms for the file open at fd (the caller's), mapped at e. Returns ms->nr: 0 when the file
 * is neither the shim nor Go nor libjvm.so nor defines both malloc and free.
 */
int memsites__find(int fd, const struct map_entry *e, struct memsites *ms);
/* Frees what *ms owns; accepts one already released. */
void memsites__release(struct memsites *ms);

/*
 * The functions in the file open at fd (the caller's), mapped at e, that only pass an allocation
 * on to malloc (C++ operator new, Rust's __rust_alloc...): their run-time address ranges are
 * appended to *r (*n of them, room for *cap; the caller frees *r), unsorted. Returns how many.
 */
int memsites__wrappers(int fd, const struct map_entry *e, struct memsite_range **r, size_t *n,
		       size_t *cap);
/* Sorts ranges by their start, for a binary search. */
void memsite_ranges__sort(struct memsite_range *r, size_t n);

#endif
