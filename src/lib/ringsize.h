/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_RINGSIZE_H
#define AUTOPROF_LIB_RINGSIZE_H

/*
 * What a BPF ring buffer is given when bpf.ringbuf-size is auto: room for what its producer
 * sends in about a second, so that a quiet 2-CPU host does not hold megabytes of rings that
 * stay empty, and a 64-CPU one does not drop samples. Drops are counted either way
 * (autoprof_*_dropped_total), and the size can be set.
 */
#include <stdint.h>

#define RING_QUIET_BYTES    (256ULL << 10) /* its profiler off, or without a target, at start */
#define RING_BUSY_BYTES	    (1ULL << 20)   /* its profiler on at start (the old fixed size) */
#define RING_MAX_AUTO_BYTES (64ULL << 20)

/* A ring of at least bytes: a power of two in [RING_QUIET_BYTES, RING_MAX_AUTO_BYTES]. */
static inline uint64_t ring__size_for(uint64_t bytes)
{
	uint64_t v = RING_QUIET_BYTES;

	while (v < bytes && v < RING_MAX_AUTO_BYTES)
		v <<= 1;
	return v;
}

#endif
