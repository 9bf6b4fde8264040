/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_SAMPLE_OFFCPU_H
#define AUTOPROF_SAMPLE_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/collect.h"

/* Off-CPU spans (tp_btf/sched_switch + a BPF task work per recorded span), into the store. */
struct offcpu;

/* What can change at run time without a restart. */
struct offcpu_settings {
	bool enabled;		/* attached to sched_switch */
	uint64_t min_block_ns;	/* shorter spans are dropped in BPF */
	uint32_t sample_ppm;	/* spans kept, in millionths */
};

struct offcpu_opts {
	struct offcpu_settings settings;
	uint64_t ringbuf_size;	/* bytes, a power of two multiple of the page size */
};

struct offcpu_stats {
	unsigned long long spans;		/* sent by BPF (kernel part) */
	unsigned long long user_stacks;		/* user parts sent by BPF */
	unsigned long long filter_short;	/* below min_block_ns */
	unsigned long long filter_long;		/* above one hour */
	unsigned long long filter_sampled;	/* not picked by the sampling probability */
	unsigned long long filter_no_user;	/* no user frame (e.g. the thread exited) */
	unsigned long long drop_map_full;	/* no room to remember a switch-out */
	unsigned long long drop_ringbuf;	/* ring buffer full */
	unsigned long long drop_task_work;	/* the user-stack task work could not be set up */
	unsigned long long drop_unjoined;	/* no user stack came for the span in time */
	unsigned long long drop_store;		/* store out of memory */
	unsigned long long drop_malformed;
	unsigned long long kstack_errors;
	unsigned long long ustack_errors;
	unsigned long long ustack_truncated;
	unsigned long long python_raced;	/* Python frames lost to another walk's buffer */
	unsigned long long ingested;		/* spans stored */
	unsigned long long waiting;		/* spans waiting for their user stack now */
	unsigned long long ringbuf_used;
	unsigned long long ringbuf_size;
	struct offcpu_settings settings;
};

/* Loads, attaches when opts->settings.enabled, adds its ring to ctx->rb. NULL with *err set. */
struct offcpu *offcpu__new(const struct offcpu_opts *opts, struct collect_ctx *ctx, int *err);
void offcpu__free(struct offcpu *oc); /* accepts NULL */
/* Applies new settings at once (any thread). 0 or a negative errno (then nothing changed). */
int offcpu__configure(struct offcpu *oc, const struct offcpu_settings *s);
void offcpu__settings(struct offcpu *oc, struct offcpu_settings *out);
void offcpu__stats(struct offcpu *oc, struct offcpu_stats *out);

#endif
