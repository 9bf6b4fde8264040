/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_MEMORY_MEMORY_PRIV_H
#define AUTOPROF_MEMORY_MEMORY_PRIV_H

/*
 * Between the files of memory profiling, nobody else: memory.c (targets, ingest, preload
 * rings, life cycle, the heap's rows from the live set, store/liveset.h) and attach.c (finding
 * and probing a process's allocator). Every field is guarded by memory's lock unless it says
 * otherwise.
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/memory_abi.h"
#include "bpf/unwind_abi.h"
#include "lib/timeconst.h"
#include "memory/memsites.h"
#include "memory/preload.h"
#include "runtime/hotspot.h"
#include "memory/memtarget.h"
#include "sample/ingest.h"
#include "symbolize/frame.h"

/* How long a new target process may take to map its allocator (ld.so maps libc within ms). */
#define ATTACH_WAIT_NS (10 * NSEC_PER_SEC)
#define GO_DEFAULT_RATE (512 * 1024)
/* Thread names of preload samples, cached (direct-mapped by tid) and read again after a while. */
#define THREAD_NAMES 256
#define THREAD_NAME_TTL_NS (10 * NSEC_PER_SEC)

struct thread_name {
	uint32_t pid, tid;
	uint64_t read_ns;
	char comm[MEMORY_COMM_LEN];
};

struct target {
	uint32_t id;
	bool removed;
	struct memtarget_spec spec;
	/* A pid target's process, by its start (procfs__start_ticks): the pid alone would match
	 * whatever process the kernel gives it after that one exits. */
	unsigned long long start;
};

/* Java classes named, by their Klass: direct-mapped (classes recur, and a miss costs 3 reads). */
#define JAVA_CLASSES 256
struct java_class {
	uint64_t klass;
	struct frame frame; /* the class as a frame (symbolizer__runtime_frame's) */
};

/* A process matched by a target: attached, or waiting for its allocator to be mapped. */
struct mproc {
	struct mproc *next;
	uint32_t pid;
	bool attached;
	enum memsites_mode mode;
	bool seen; /* mark for a rescan */
	struct preload_ring *pring; /* preload: the shim's ring */
	/* Go and Java: the runtime's own code (run-time addresses; it leads stacks, and is
	 * stripped from them): Go's runtime package's functions, libjvm.so's text. Go:
	 * MemProfileRate's address, read through mem_fd at each sample. Java: mem_fd reads the
	 * classes' names, found by the offsets in hs, and kept by their Klass in classes */
	struct memsite_range *rt;
	size_t nr_rt;
	struct hotspot_offsets hs;
	struct java_class *classes;
	/* Others: the functions that only pass an allocation on (operator new...), sorted */
	struct memsite_range *wrap;
	size_t nr_wrap;
	uint64_t go_rate_addr;
	int mem_fd;
	uint64_t deadline_ns;
	char exe[256];
	char object[PATH_MAX]; /* the file defining malloc */
	struct bpf_link *entry, *ret;
};

_Static_assert(MEMORY_MAX_USTACK <= INGEST_MAX_USTACK && MEMORY_MAX_PYTHON <= INGEST_MAX_PYTHON,
	       "an allocation's stack fits the ingest path");

struct memory {
	struct collect_ctx *ctx;
	struct memory_bpf *skel;
	struct ring *ring;
	uint64_t mean;
	uint64_t ringbuf_size;
	pthread_mutex_t lock; /* targets, procs, live: the API and queries read them */
	struct target *targets;
	uint32_t nr_targets, next_id;
	bool dirty; /* targets changed: rescan at the next tick */
	struct mproc *procs;
	struct liveset *live; /* sampled allocations not freed yet (its own lock) */
	unsigned long long ingested, drop_store, drop_malformed, attach_ok, attach_failed;
	unsigned long long probes_emulated, probes_entry;
	unsigned long long jvm_unprobed;	  /* JVM targets whose libjvm.so lacks AllocTracer */
	unsigned long long java_class_unnamed; /* Java samples whose class could not be read */
	/* preload rings: records read (allocations, frees), and what the closed rings had */
	unsigned long long preload_allocs, preload_frees, preload_unwound_truncated;
	struct preload_ring_stats preload_gone;
	struct ingest *ingest;			 /* stacks to frames, as every sampler */
	struct memory_alloc_event pev;		 /* a preload record as an event */
	struct thread_name tnames[THREAD_NAMES]; /* preload records' thread names */
	struct unwind_proc uproc;      /* the mapping table its walk uses */
};

/* attach.c: p's allocator found and probed, or its preload ring opened (0 or a negative
 * errno); its preload ring closed; its probes detached. */
int mproc__attach(struct memory *m, struct mproc *p, uint64_t now);
void mproc__close_preload(struct memory *m, struct mproc *p);
void mproc__detach(struct memory *m, struct mproc *p);

/* memory.c: the slot of pid's mproc (*slot NULL if absent); p's preload ring read now. */
struct mproc **mproc__find(struct memory *m, uint32_t pid);
void preload_drain(struct memory *m, struct mproc *p);

#endif
