/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_SAMPLE_ONCPU_H
#define AUTOPROF_SAMPLE_ONCPU_H

#include <stdint.h>

#include "collect/collect.h"

/* On-CPU sampling of every CPU at a fixed frequency (cpu-clock), into the store. */
struct oncpu;

struct oncpu_opts {
	uint32_t frequency;	/* Hz per CPU */
	uint64_t ringbuf_size;	/* bytes, a power of two multiple of the page size */
};

struct oncpu_stats {
	unsigned long long samples;	     /* sent by BPF */
	unsigned long long idle;	     /* idle-task samples, not recorded */
	unsigned long long drop_ringbuf;     /* lost: ring buffer full */
	unsigned long long kstack_errors;
	unsigned long long ustack_errors;
	unsigned long long ustack_truncated;
	unsigned long long ingested;	     /* stored */
	unsigned long long drop_store;	     /* lost: store out of memory */
	unsigned long long drop_malformed;   /* lost: event shorter than it claims */
	unsigned long long ringbuf_used;     /* bytes waiting in the ring buffer now */
	unsigned long long ringbuf_size;
	unsigned int cpus;		     /* CPUs sampled */
};

/* Loads, attaches to every online CPU and adds its ring to ctx->rb. NULL with *err set. */
struct oncpu *oncpu__new(const struct oncpu_opts *opts, struct collect_ctx *ctx, int *err);
void oncpu__free(struct oncpu *oc); /* accepts NULL */
void oncpu__stats(struct oncpu *oc, struct oncpu_stats *out);

#endif
