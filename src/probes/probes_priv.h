/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROBES_PROBES_PRIV_H
#define AUTOPROF_PROBES_PROBES_PRIV_H

/* Between probes.c (attach, call matching, answers), calls.c (a probe's calls) and resolve.c
 * (where a probe goes). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/probes_abi.h"
#include "probes/histogram.h"
#include "probes/probes.h"
#include "probes/probespec.h"

#define THRESHOLD_WINDOW 60   /* seconds the default threshold (p95) covers */
#define EWMA_TAU	 60.0 /* seconds: the moving average's time constant */
#define RECENT_CALLS	 8192 /* exact durations of the last calls: quantiles, the threshold */
#define MAX_SITES	 16   /* addresses of one source line */
#define CODE_BYTES	 64   /* prologue bytes read for placement */

struct probe {
	uint32_t id;
	struct probe_spec spec;
	enum probes_kind kind;
	size_t nr_sites;
	unsigned long offsets[MAX_SITES];
	bool emulated; /* the entry probe sits on an emulated instruction */
	struct bpf_link *entry, *ret;
	/* The binary as checked and read, until attached: the uprobe goes on this very file
	 * (/proc/self/fd/N), not on whatever its path names by then. */
	int fd;
	unsigned long long calls;
	/* One histogram per second of the last PROBES_MAX_SECONDS, by second % that. */
	int64_t sec_of[PROBES_MAX_SECONDS];
	uint64_t sec_sum[PROBES_MAX_SECONDS];
	uint32_t (*secs)[LATENCY_BUCKETS];
	unsigned long long total[LATENCY_BUCKETS];
	double total_sum_ns;
	double ewma[LATENCY_BUCKETS];
	int64_t ewma_sec; /* the last second folded into ewma */
	/* The last RECENT_CALLS calls, call n at n % RECENT_CALLS (n counts from 0 to calls). */
	struct recent_call {
		uint64_t end_ns, dur_ns;
	} *recent;
	uint64_t threshold_ns, threshold_at;
	unsigned long long threshold_calls; /* calls when it was computed */
};

/*
 * Opens p's binary as a file others may control (ufile.h) and finds where its probe goes (a
 * function's placement-checked entry, or a line's addresses): p->offsets, p->nr_sites,
 * p->emulated, and p->fd kept open for the attach. 0, or -EINVAL with *why set.
 */
int probe__locate(struct probe *p, char *why, size_t why_len);

/* calls.c: a probe's calls (under the probes' lock). observe: one call of dur ending at
 * end_ns; recent: the exact durations of the kept calls ending from from_ns on (malloc'd, the
 * caller frees; *all: they are every call since); window: the histogram of the last seconds;
 * threshold: the latency above which a call is slow (the spec's, or the p95 of the last
 * THRESHOLD_WINDOW seconds); classify: dur against it. */
void probe__observe(struct probe *p, uint64_t dur, uint64_t end_ns);
uint64_t *probe__recent(const struct probe *p, uint64_t from_ns, size_t *n, bool *all);
unsigned long long probe__window(const struct probe *p, unsigned int seconds, double *counts,
				 uint64_t *sum);
void probe__ewma_update(struct probe *p, int64_t now_sec);
uint64_t probe__threshold(struct probe *p, uint64_t now);
enum store_latency probe__classify(struct probe *p, uint64_t dur, uint64_t now);

#endif
