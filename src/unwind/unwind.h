/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UNWIND_H
#define AUTOPROF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The unwinder mirrors what BPF needs to walk user stacks without frame pointers
 * (bpf/unwind.bpf.h): one table of rows per file, built from its .eh_frame when a process first
 * maps it and shared by every process that maps it, and each process's executable mappings.
 * Rows live in one BPF array of chunks that are made as the tables grow, bounded by the
 * configured memory; when it is full, tables of files no process maps go first, then the least
 * recently mapped (their frames fall back to frame pointers), each eviction counted.
 *
 * Updated from the ingest thread (the proctab's listener); stats may be read from any thread.
 */
struct unwinder;
struct bpf_object;
struct proc_map;
struct unwind_proc;

/* What a row takes of unwinder_opts.memory_limit, about: 8 bytes, and a page index entry (4
 * bytes) for every two rows (code has a few rows per 256-byte page). The limit itself counts
 * both exactly, 8 bytes an element (bpf/unwind_abi.h). */
#define UNWINDER_ROW_BYTES 10

struct unwinder_opts {
	uint64_t memory_limit;	/* bytes of rows and page index; at least one row */
	uint32_t max_processes; /* processes with a mapping table at once */
	/* A table over 1/big_table_share of the budget only takes free or idle room, never a
	 * table in use (one huge binary must not blind autoprof to the rest); 0: 8. */
	uint32_t big_table_share;
	bool walk_cache; /* samplers that can use the walk cache get one (unwinder__cache_walks) */
};

/* Creates the BPF maps. NULL with *err set (negative errno). */
struct unwinder *unwinder__new(const struct unwinder_opts *opts, int *err);
void unwinder__free(struct unwinder *u); /* accepts NULL */

/* Points obj's unwind maps (declared by bpf/unwind.bpf.h) at ours; call before loading obj. */
int unwinder__reuse_maps(struct unwinder *u, struct bpf_object *obj);

/*
 * Gives obj's walk cache (bpf/unwind_abi.h) its entries, unless the options said no (call before
 * loading obj): only for samplers whose programs never run preemptibly, as bpf/unwind.bpf.h
 * explains. 1: the cache is on, and the caller sets obj's unwind_cache; 0: off; or a negative
 * errno. UNWIND_CACHE_ENTRIES entries of struct unwind_cache_entry per CPU, counted in
 * unwinder_stats.cache_bytes.
 */
int unwinder__cache_walks(struct unwinder *u, struct bpf_object *obj);

/* The fd of one of the maps by its name in bpf/unwind.bpf.h (for inspection and tests; owned by
 * the unwinder), or -ENOENT. */
int unwinder__map_fd(struct unwinder *u, const char *name);

/*
 * The process's executable mappings are now maps[0, n) (address order); n == 0: it is gone.
 * Tables of files not seen before are built on the unwinder's own thread: until theirs is in,
 * frames in them are walked by frame pointers. Signature of a proctab listener.
 */
void unwinder__update(void *u, uint32_t pid, const struct proc_map *maps, uint32_t n);
/*
 * unwinder__update, with the flags this read of the maps found (UNWIND_PROC_NO_TRACECTX), which
 * replace the last read's in the same update. UNWIND_PROC_PYTHON comes from
 * unwinder__set_proc_flag and stays.
 */
void unwinder__update_flags(struct unwinder *u, uint32_t pid, const struct proc_map *maps,
			    uint32_t n, uint32_t flags);

/*
 * The process was started (exec'd) while we run: its tables, queued now or later (libraries
 * mapped after exec), are built ahead of the backlog, so that its first samples find them.
 * Call after its first update; an exec starts the process over (not urgent).
 */
void unwinder__urgent(struct unwinder *u, uint32_t pid);

/* Sets flag (enum unwind_proc_flags) on the process's mapping table, for good (until exec). */
void unwinder__set_proc_flag(struct unwinder *u, uint32_t pid, uint32_t flag);
/* A JVM's interpreter code, [lo, hi): its walks send the methods of its frames
 * (UNWIND_FRAME_JAVA). Kept until exec; a process not known yet is left alone. */
void unwinder__set_java(struct unwinder *u, uint32_t pid, uint64_t lo, uint64_t hi);

/*
 * The file in slot (a frame BPF sent as UNWIND_FRAME(): bpf/unwind_abi.h), or NULL when the
 * slot is free. Borrowed: valid until the ingest thread next calls into the unwinder (files
 * are dropped only from its calls; a slot is reused last, first freed first taken).
 */
struct dso *unwinder__slot_dso(struct unwinder *u, uint32_t slot);

/* Returns once every table asked for so far is built and in BPF (tests, benchmarks). */
void unwinder__wait_idle(struct unwinder *u);

/*
 * A mark of the tables asked for so far, and whether each of them is built (or failed) by now:
 * readiness waits for the start-up scan's tables without waiting for those of processes
 * started since (exec churn would keep the queue from ever being empty).
 */
uint64_t unwinder__queue_mark(struct unwinder *u);
bool unwinder__built_through(struct unwinder *u, uint64_t mark);

/* Brings back tables evicted while in use where room has freed up; call every few seconds. */
void unwinder__maintain(struct unwinder *u);

/*
 * Walking stacks copied out of a process (the preload shim's: registers at a call and the bytes
 * from sp up) in user space, with the tables BPF reads (mapped read-only, no syscall per walk)
 * and bpf/unwind_step.h's rules. Any thread, no lock: tables rewritten meanwhile may give a wrong
 * frame, never a read outside the tables or the copy.
 */

/* A copy of process pid's mapping table as BPF sees it into *out (the caller's; one syscall, to
 * reuse for many walks while the process's maps stay). 0, -ENOENT: none yet, or -errno. */
int unwinder__proc(struct unwinder *u, uint32_t pid, struct unwind_proc *out);

/*
 * Walks a copied stack: pc is a return address into the caller (the registers at a function's
 * entry, its return address popped: sp the caller's stack pointer, bp its rbp), stack[0, len)
 * the process's memory at [sp, sp + len); memory outside the copy is unreadable. proc from
 * unwinder__proc (NULL: frame pointers only; u may be NULL then). Writes the return addresses,
 * pcs[0] = pc, to
 * pcs[0, max) and returns how many; *truncated: it stopped before the outermost frame (max
 * reached, memory outside the copy, a rule it cannot follow, no unwind info). Unlike a BPF
 * stack's leaf, pcs[0] is a return address too: step it back into the call like the others
 * (past a signal frame, pcs are stored one byte on, as in BPF, so that the same step lands on
 * them).
 */
uint32_t unwinder__walk_copy(struct unwinder *u, const struct unwind_proc *proc, uint64_t pc,
			     uint64_t sp, uint64_t bp, const void *stack, size_t len, uint64_t *pcs,
			     uint32_t max, bool *truncated);

struct unwinder_stats {
	uint64_t row_bytes;	   /* rows and page index in use, bytes */
	uint64_t capacity_bytes;   /* rows and page index that fit, bytes */
	uint64_t allocated_bytes;  /* chunks made so far, bytes (the kernel's memlock) */
	uint64_t files;		   /* files with a table now */
	uint64_t processes;	   /* processes with a mapping table now */
	uint64_t builds;	   /* tables built */
	uint64_t reuses;	   /* mappings of a file whose table was already there */
	uint64_t urgent_builds;	   /* tables put ahead of the queue for a new process */
	uint64_t build_errors;	   /* files whose unwind info could not be read */
	uint64_t build_ns;	   /* time spent building tables */
	uint64_t evictions;	   /* tables dropped to make room */
	uint64_t too_big;	   /* tables larger than the whole budget */
	uint64_t maps_truncated;   /* processes with more mappings than a table holds */
	uint64_t update_errors;	   /* BPF map updates that failed */
	uint64_t cache_bytes;	   /* the samplers' walk caches, all CPUs */
	/* BPF walk outcomes, summed over CPUs (enum unwind_counter order). */
	unsigned long long bpf[16];
};
void unwinder__stats(struct unwinder *u, struct unwinder_stats *out);

#endif
