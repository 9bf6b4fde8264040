// SPDX-License-Identifier: GPL-2.0-only
/* A probe's calls: per-second histograms, the exact durations of recent calls, the moving
 * average, the threshold between fast and slow calls. */
#define pr_fmt(fmt) "probes: " fmt

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/timeconst.h"
#include "probes/probes.h"
#include "probes/probes_priv.h"
#include "store/store.h"

/* ---- histograms --------------------------------------------------------------------------- */

void probe__observe(struct probe *p, uint64_t dur, uint64_t end_ns, const uint64_t *values,
		    uint32_t captured)
{
	struct recent_call *rc;

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
	rc = &p->recent[p->calls % RECENT_CALLS];
	*rc = (struct recent_call){.end_ns = end_ns, .dur_ns = dur, .captured = captured};
	if (values)
		memcpy(rc->values, values, sizeof(rc->values));
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

/* ---- grouped by a captured value ------------------------------------------------------------ */

/* Capture k's value sign-extended when its type is signed. */
static int64_t as_signed(const struct probe *p, unsigned int k, uint64_t v)
{
	unsigned int bits = 8u * p->cap_info[k].size;

	if (bits && bits < 64 && (v & (1ull << (bits - 1))))
		v |= ~0ull << bits;
	return (int64_t)v;
}

static uint64_t masked(const struct probe *p, unsigned int k, uint64_t v)
{
	unsigned int bits = 8u * p->cap_info[k].size;

	return bits && bits < 64 ? v & ((1ull << bits) - 1) : v;
}

void probe__format_value(const struct probe *p, unsigned int k, uint64_t v, char *out, size_t n)
{
	if (p->cap_info[k].is_pointer)
		snprintf(out, n, "0x%llx", (unsigned long long)v);
	else if (p->cap_info[k].is_signed)
		snprintf(out, n, "%lld", (long long)as_signed(p, k, v));
	else
		snprintf(out, n, "%llu", (unsigned long long)masked(p, k, v));
}

/* A call's group: its value (ordered as a signed or unsigned number), or where it had none. */
struct grouped {
	int state;   /* 0: a value, 1: optimized out, 2: unreadable */
	int64_t key; /* the value, or (ranges) its power-of-two range: sign * (bit length) */
	uint64_t dur;
};

static int grouped_cmp(const void *a, const void *b)
{
	const struct grouped *x = a, *y = b;

	if (x->state != y->state)
		return x->state - y->state;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->dur > y->dur) - (x->dur < y->dur);
}

/* The power-of-two range of v: its bit length, negative for negative values. */
static int64_t range_of(int64_t v, bool is_signed)
{
	uint64_t m = is_signed && v < 0 ? (uint64_t) - (v + 1) + 1 : (uint64_t)v;
	int64_t bits = m ? 64 - __builtin_clzll(m) : 0;

	return is_signed && v < 0 ? -bits : bits;
}

static json_t *group_json(const struct probe *p, unsigned int k, const struct grouped *g, size_t n,
			  bool ranges)
{
	uint64_t *durs = malloc(n * sizeof(*durs)), sum = 0;
	char value[64];
	json_t *o;

	if (!durs)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		durs[i] = g[i].dur;
		sum += g[i].dur;
	}
	if (g->state == 1) {
		snprintf(value, sizeof(value), "optimized out");
	} else if (g->state == 2) {
		snprintf(value, sizeof(value), "unreadable");
	} else if (!ranges) {
		probe__format_value(p, k, (uint64_t)g->key, value, sizeof(value));
	} else {
		int64_t b = g->key < 0 ? -g->key : g->key;
		uint64_t lo = b ? 1ull << (b - 1) : 0,
			 hi = b ? (b == 64 ? ~0ull : (1ull << b) - 1) : 0;

		if (g->key < 0)
			snprintf(value, sizeof(value), "-%llu..-%llu", (unsigned long long)hi,
				 (unsigned long long)lo);
		else
			snprintf(value, sizeof(value), "%llu..%llu", (unsigned long long)lo,
				 (unsigned long long)hi);
	}
	/* durs are in the group's order: sorted by duration within it. */
	o = json_pack("{s:s,s:I,s:o,s:o,s:o,s:o,s:o}", "value", value, "count", (json_int_t)n,
		      "mean_ns", json__u64(sum / n), "p50_ns",
		      json__u64(latency__rank(durs, n, 0.5)), "p90_ns",
		      json__u64(latency__rank(durs, n, 0.9)), "p95_ns",
		      json__u64(latency__rank(durs, n, 0.95)), "p99_ns",
		      json__u64(latency__rank(durs, n, 0.99)));
	free(durs);
	return o;
}

json_t *probe__groups(const struct probe *p, uint64_t from_ns, unsigned int k)
{
	size_t kept = p->calls < RECENT_CALLS ? (size_t)p->calls : RECENT_CALLS, n = 0,
	       distinct = 0;
	struct grouped *g = malloc((kept ? kept : 1) * sizeof(*g));
	bool is_signed = p->cap_info[k].is_signed, ranges;
	json_t *list = json_array();

	if (!g || !list) {
		free(g);
		json_decref(list);
		return NULL;
	}
	for (size_t i = 0; i < kept; i++) {
		const struct recent_call *rc = &p->recent[i];
		struct grouped *x = &g[n];

		if (rc->end_ns < from_ns)
			continue;
		x->dur = rc->dur_ns;
		x->key = 0;
		if (rc->captured & PROBES_VALUE_OK(k)) {
			x->state = 0;
			x->key = is_signed ? as_signed(p, k, rc->values[k])
					   : (int64_t)masked(p, k, rc->values[k]);
		} else {
			x->state = rc->captured & PROBES_VALUE_FAULT(k) ? 2 : 1;
		}
		n++;
	}
	/* Unsigned values past INT64_MAX order as negatives: the groups' order is cosmetic. */
	qsort(g, n, sizeof(*g), grouped_cmp);
	for (size_t i = 0; i < n; i++)
		distinct += !g[i].state && (!i || g[i - 1].state || g[i - 1].key != g[i].key);
	ranges = distinct > GROUPS_EXACT_MAX;
	if (ranges) {
		for (size_t i = 0; i < n; i++)
			if (!g[i].state)
				g[i].key = range_of(g[i].key, is_signed);
		qsort(g, n, sizeof(*g), grouped_cmp);
	}
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && g[j].state == g[i].state && g[j].key == g[i].key; j++)
			;
		if (json_array_append_new(list, group_json(p, k, &g[i], j - i, ranges))) {
			json_decref(list);
			list = NULL;
			break;
		}
	}
	free(g);
	return list;
}

/* ---- the latency answer --------------------------------------------------------------------- */

json_t *probe__latency_json(struct probe *p, unsigned int seconds, int by)
{
	static const double qs[4] = {0.5, 0.9, 0.95, 0.99};
	double counts[LATENCY_BUCKETS];
	uint64_t sum, q[4], eq[4], now, end_sec, *vals;
	unsigned long long n;
	json_t *buckets, *doc;
	size_t nr_vals;
	bool exact;
	int err = 0;

	probe__ewma_update(p, (int64_t)(now_ns() / NSEC_PER_SEC));
	/* The decayed completed seconds and the current one so far: all time, recent first. */
	probe__window(p, 1, counts, &sum);
	for (size_t b = 0; b < LATENCY_BUCKETS; b++)
		counts[b] += p->ewma[b] * exp(-1.0 / EWMA_TAU);
	for (int i = 0; i < 4; i++)
		eq[i] = latency__quantile(counts, qs[i]);
	n = probe__window(p, seconds, counts, &sum);
	/*
	 * Exact when the kept calls are every call of the window (the window as probe__window() has
	 * it: from the start of its first second), else from the histogram's buckets.
	 */
	now = now_ns();
	end_sec = now / NSEC_PER_SEC + 1;
	vals = probe__recent(p, (end_sec > seconds ? end_sec - seconds : 0) * NSEC_PER_SEC,
			     &nr_vals, &exact);
	exact = exact && nr_vals == n;
	for (int i = 0; i < 4; i++)
		q[i] =
		    exact ? latency__rank(vals, nr_vals, qs[i]) : latency__quantile(counts, qs[i]);
	free(vals);
	buckets = json_array();
	for (size_t b = 0; !err && b < LATENCY_BUCKETS; b++) {
		if (!counts[b])
			continue;
		/* nearbyint rounds as printf's %.0f did: half to even. */
		err = json_array_append_new(buckets, json_pack("{s:o,s:I}", "le_ns",
							       json__u64(latency__le(b)), "count",
							       (json_int_t)nearbyint(counts[b])));
	}
	if (err) {
		json_decref(buckets);
		buckets = NULL;
	}
	doc = json_pack("{s:I,s:o,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:{s:o,s:o,s:o,s:o},s:b,s:o,s:o}",
			"id", (json_int_t)p->id, "name", json__str(p->spec.name), "seconds",
			(json_int_t)seconds, "count", json__u64(n), "sum_ns", json__u64(sum),
			"p50_ns", json__u64(q[0]), "p90_ns", json__u64(q[1]), "p95_ns",
			json__u64(q[2]), "p99_ns", json__u64(q[3]), "ewma", "p50_ns",
			json__u64(eq[0]), "p90_ns", json__u64(eq[1]), "p95_ns", json__u64(eq[2]),
			"p99_ns", json__u64(eq[3]), "exact", exact, "threshold_ns",
			json__u64(p->kind == PROBES_KIND_CALL ? probe__threshold(p, now) : 0),
			"buckets", buckets);
	if (doc && by >= 0 &&
	    (json_object_set_new(doc, "group_by", json_string(p->spec.capture[by])) ||
	     json_object_set_new(
		 doc, "groups",
		 probe__groups(p, (end_sec > seconds ? end_sec - seconds : 0) * NSEC_PER_SEC,
			       (unsigned int)by)))) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}
