/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_MEMORY_PRELOAD_H
#define AUTOPROF_MEMORY_PRELOAD_H

/*
 * The preload shim's ring (preload/autoprof_preload.h), mapped from its process (the shim's
 * sealed memfd, through /proc/PID/map_files): sampled allocations with a copy of their stack,
 * and their frees, written by the process without a trap; the shim's record is read and written
 * through /proc/PID/mem. The memory collector owns one reader per preload process and
 * drains it from the ingest thread (on its timer, and when the shim's flush marker fires).
 */
#include <stddef.h>
#include <stdint.h>

#include "preload/autoprof_preload.h"

struct preload_ring;

/*
 * Called for each committed record, in ring order. r: a copy of its header, checked; stack: the
 * ALLOC record's stack copy (r->stack_len bytes, still in the ring: the process may change
 * them, never their extent), valid during the call only.
 */
typedef void (*preload_rec_fn)(void *arg, const struct autoprof_preload_rec *r,
			       const void *stack);

/*
 * Opens the ring of process pid whose struct autoprof_preload is at record_addr, skips what is
 * in it, and tells the shim to write records (consumer). NULL with *err: -ESRCH (gone),
 * -EAGAIN (its ring is not made yet), -EPROTO (a shim before version 2, a ring whose records
 * could be too long, or one not in a sealed memfd), another negative errno. The caller owns it.
 */
struct preload_ring *preload_ring__open(uint32_t pid, uint64_t record_addr, int *err);
/* Tells the shim to stop writing (when the process is still there) and frees r; accepts NULL. */
void preload_ring__close(struct preload_ring *r);

/*
 * Hands the committed records to fn and gives their room back. Returns the number of records,
 * or -ESRCH when the process is gone and none were left (the ring outlives it: what it wrote
 * last is still drained). A malformed ring (a record whose length cannot be) is skipped to its
 * head and counted.
 */
int preload_ring__drain(struct preload_ring *r, preload_rec_fn fn, void *arg);

struct preload_ring_stats {
	uint64_t records;   /* records read */
	uint64_t bytes;	    /* bytes of ring read */
	uint64_t dropped;   /* records the shim lost to a full ring (its count) */
	uint64_t stack_cut; /* stack copies the shim cut at its stack_max (its count) */
	uint64_t malformed; /* times the ring held what no record can be */
};
/* Adds r's counts to *sum (rings of many processes, and of those gone, add up). */
void preload_ring__add_stats(const struct preload_ring *r, struct preload_ring_stats *sum);

/* Where preload_ring__parse stopped, and why. */
enum preload_parse_stop {
	PRELOAD_PARSE_END,     /* at buf's end: less than a record's start left */
	PRELOAD_PARSE_PENDING, /* at a record not committed (yet) */
	PRELOAD_PARSE_CUT,     /* at a committed record that runs past buf's end */
};

/*
 * Lower level, for tests and the fuzzer: the records of buf, the ring's bytes from position
 * pos on (len bytes, not crossing the ring's end; buf 8-byte aligned), to fn. Returns the bytes
 * of whole committed records from buf's start, *stop saying why parsing stopped there (the
 * commit word is read once: a record committed meanwhile is PENDING, never CUT), or -EBADMSG
 * when a committed record's length cannot be (*stop not set).
 */
long preload_ring__parse(const uint8_t *buf, size_t len, uint64_t pos, preload_rec_fn fn,
			 void *arg, enum preload_parse_stop *stop);

#endif
