/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROBES_PROBES_PRIV_H
#define AUTOPROF_PROBES_PROBES_PRIV_H

/* Between probes.c (attach, call matching, answers), calls.c (a probe's calls) and resolve.c
 * (where a probe goes). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <libelf.h>
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
	uint64_t vaddrs[MAX_SITES]; /* the same addresses as the ELF file's virtual addresses */
	/* What each address captures (bpf/probes_abi.h), and how each value reads. */
	struct probes_captures caps[MAX_SITES];
	struct capture_info {
		uint8_t size;	  /* bytes */
		bool is_signed;	  /* else unsigned */
		bool is_pointer;  /* shown in hex */
		char where[96];	  /* how the first address reads it, for the probe's listing */
	} cap_info[PROBE_CAPTURES_MAX];
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
		uint64_t values[PROBE_CAPTURES_MAX];
		uint32_t captured; /* PROBES_VALUE_* bits */
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

/*
 * capture.c: translates p->spec's captures into reads at each of p's addresses (p->caps,
 * p->cap_info) from elf's DWARF. 0, or -EINVAL with *why naming the capture and what is wrong.
 */
int probe__captures(struct probe *p, Elf *elf, char *why, size_t why_len);

/* calls.c: a probe's calls (under the probes' lock). observe: one call of dur ending at
 * end_ns; recent: the exact durations of the kept calls ending from from_ns on (malloc'd, the
 * caller frees; *all: they are every call since); window: the histogram of the last seconds;
 * threshold: the latency above which a call is slow (the spec's, or the p95 of the last
 * THRESHOLD_WINDOW seconds); classify: dur against it. */
void probe__observe(struct probe *p, uint64_t dur, uint64_t end_ns, const uint64_t *values,
		    uint32_t captured);
uint64_t *probe__recent(const struct probe *p, uint64_t from_ns, size_t *n, bool *all);
unsigned long long probe__window(const struct probe *p, unsigned int seconds, double *counts,
				 uint64_t *sum);
void probe__ewma_update(struct probe *p, int64_t now_sec);
uint64_t probe__threshold(struct probe *p, uint64_t now);
enum store_latency probe__classify(struct probe *p, uint64_t dur, uint64_t now);
/*
 * The kept calls that ended from from_ns on, grouped by the value of capture k: each value's
 * count and quantiles, or power-of-two ranges of values when there are more than
 * GROUPS_EXACT_MAX of them; the calls where it was optimized out or unreadable apart. A new
 * JSON array, or NULL when out of memory.
 */
#define GROUPS_EXACT_MAX 32
json_t *probe__groups(const struct probe *p, uint64_t from_ns, unsigned int k);
/*
 * The latency answer of the last `seconds` (GET /api/v1/probes/ID/latency): count, quantiles
 * (exact from the kept calls when they are all of the window's), the moving average, the
 * threshold, the histogram's buckets; grouped by capture `by` too unless it is negative. A
 * new JSON object, or NULL when out of memory.
 */
json_t *probe__latency_json(struct probe *p, unsigned int seconds, int by);
/* Capture k's value as the API writes it (sign, hex for pointers). */
void probe__format_value(const struct probe *p, unsigned int k, uint64_t v, char *out, size_t n);

#endif
