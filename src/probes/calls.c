// SPDX-License-Identifier: GPL-2.0-only
/* A probe's calls: per-second histograms, the exact durations of recent calls, the moving
 * average, the threshold between fast and slow calls. */
#define pr_fmt(fmt) "probes: " fmt

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/timeconst.h"
#include "probes/probes.h"
#include "probes/probes_priv.h"
#include "store/store.h"

/* ---- histograms --------------------------------------------------------------------------- */

void probe__observe(struct probe *p, uint64_t dur, uint64_t end_ns)
{
	int64_t sec = (int64_t)(end_ns / NSEC_PER_SEC);
	size_t slot = (size_t)(sec % PROBES_MAX_SECONDS), b = latency__bucket(dur);

	if (p->sec_of[slot] != sec && sec > p->sec_of[slot]) {
		memset(p->secs[slot], 0, sizeof(p->secs[slot]));
		p->sec_of[slot] = sec;
		p->sec_sum[slot] = 0;
	}
	if (p->sec_of[slot] == sec) {
		p->secs[slot][b]++;
		p->sec_sum[slot] += dur;
	}
	p->total[b]++;
	p->total_sum_ns += (double)dur;
	p->recent[p->calls % RECENT_CALLS] = (struct recent_call){.end_ns = end_ns, .dur_ns = dur};
	p->calls++;
}

/*
 * The durations of the kept calls that ended at or after from_ns, sorted (malloc'ed, the caller
 * frees; NULL when none or out of memory), and their count in *n. *all says whether they are
 * every call since from_ns: false once calls since then were pushed out by newer ones.
 */
uint64_t *probe__recent(const struct probe *p, uint64_t from_ns, size_t *n, bool *all)
{
	size_t kept = p->calls < RECENT_CALLS ? (size_t)p->calls : RECENT_CALLS;
	uint64_t *vals;

	*n = 0;
	/* The oldest kept call is the next one overwritten. */
	*all = p->calls <= RECENT_CALLS || p->recent[p->calls % RECENT_CALLS].end_ns < from_ns;
	vals = kept ? malloc(kept * sizeof(*vals)) : NULL;
	if (!vals)
		return NULL;
	for (size_t i = 0; i < kept; i++)
		if (p->recent[i].end_ns >= from_ns)
			vals[(*n)++] = p->recent[i].dur_ns;
	if (!*n) {
		free(vals);
		return NULL;
	}
	latency__sort(vals, *n);
	return vals;
}

/* The last `seconds` (the current one included) summed into counts; returns the count. */
unsigned long long probe__window(const struct probe *p, unsigned int seconds, double *counts,
				 uint64_t *sum)
{
	int64_t now = (int64_t)(now_ns() / NSEC_PER_SEC);
	unsigned long long n = 0;

	memset(counts, 0, LATENCY_BUCKETS * sizeof(*counts));
	*sum = 0;
	for (int64_t s = now - seconds + 1; s <= now; s++) {
		size_t slot = (size_t)(s % PROBES_MAX_SECONDS);

		if (p->sec_of[slot] != s)
			continue;
		for (size_t b = 0; b < LATENCY_BUCKETS; b++) {
			counts[b] += p->secs[slot][b];
			n += p->secs[slot][b];
		}
		*sum += p->sec_sum[slot];
	}
	return n;
}

/* Folds the completed seconds into the decayed histogram. */
void probe__ewma_update(struct probe *p, int64_t now_sec)
{
	double decay = exp(-1.0 / EWMA_TAU);

	if (now_sec - 1 - p->ewma_sec > PROBES_MAX_SECONDS) {
		double d =
		    exp(-(double)(now_sec - 1 - p->ewma_sec - PROBES_MAX_SECONDS) / EWMA_TAU);

		for (size_t b = 0; b < LATENCY_BUCKETS; b++)
			p->ewma[b] *= d;
		p->ewma_sec = now_sec - 1 - PROBES_MAX_SECONDS;
	}
	for (int64_t s = p->ewma_sec + 1; s < now_sec; s++) {
		size_t slot = (size_t)(s % PROBES_MAX_SECONDS);
		bool have = p->sec_of[slot] == s;

		for (size_t b = 0; b < LATENCY_BUCKETS; b++)
			p->ewma[b] = p->ewma[b] * decay + (have ? p->secs[slot][b] : 0);
	}
	if (now_sec - 1 > p->ewma_sec)
		p->ewma_sec = now_sec - 1;
}

/*
 * The threshold in effect: the user's, else the exact p95 of the calls of the last minute (the
 * last RECENT_CALLS of them at most), else, when none ended in that minute, of the decayed
 * histogram.
 */
uint64_t probe__threshold(struct probe *p, uint64_t now)
{
	uint64_t window_ns = (uint64_t)THRESHOLD_WINDOW * NSEC_PER_SEC, *vals;
	bool all;
	size_t n;

	if (p->spec.threshold_ns)
		return p->spec.threshold_ns;
	/* Once a second, and whenever the calls doubled: the first calls' p95 says little. */
	if (p->threshold_ns && now - p->threshold_at < NSEC_PER_SEC &&
	    p->calls < 2 * p->threshold_calls)
		return p->threshold_ns;
	vals = probe__recent(p, now > window_ns ? now - window_ns : 0, &n, &all);
	if (vals)
		p->threshold_ns = latency__rank(vals, n, 0.95);
	else
		p->threshold_ns = latency__quantile(p->ewma, 0.95);
	free(vals);
	p->threshold_at = now;
	p->threshold_calls = p->calls;
	return p->threshold_ns;
}

enum store_latency probe__classify(struct probe *p, uint64_t dur, uint64_t now)
{
	return dur > probe__threshold(p, now) ? STORE_LATENCY_SLOW : STORE_LATENCY_FAST;
}
