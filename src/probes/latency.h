/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROBES_LATENCY_H
#define AUTOPROF_PROBES_LATENCY_H

/*
 * The pure logic of latency probes, apart from BPF so that it is unit tested: what a probe
 * request says (the API's JSON, the config's short form) and the log-linear histogram of call
 * durations with its quantiles.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/*
 * Log-linear buckets of nanoseconds: one per value up to 16, then four per power of two (each a
 * quarter of it wide) up to 2^44 ns (4.9 h; longer calls land in the last). Bucket i holds
 * (latency__le(i - 1), latency__le(i)]; every power of two >= 32 ns is a bucket bound, which the
 * Prometheus histogram uses as its le.
 */
#define LATENCY_BUCKETS 177

size_t latency__bucket(uint64_t ns);
/* The inclusive upper bound of bucket i. */
uint64_t latency__le(size_t i);
/*
 * The q-quantile (0 < q <= 1) of counts[0, LATENCY_BUCKETS), interpolated linearly inside its
 * bucket; 0 when the counts are all zero. Doubles: decayed histograms have fractional counts.
 */
uint64_t latency__quantile(const double *counts, double q);
/*
 * The q-quantile (0 < q <= 1) of n durations, exactly: the nearest rank, i.e. the smallest value
 * with at least q * n of them at or below it, so that a q-quantile of 0.95 leaves at most 5 % of
 * the values above it even when they sit in one tight cluster (interpolating inside a histogram
 * bucket lands above such a cluster, and then no value is above the quantile). vals must be
 * sorted (latency__sort); 0 when n is 0.
 */
uint64_t latency__rank(const uint64_t *vals, size_t n, double q);
void latency__sort(uint64_t *vals, size_t n);

#define PROBE_NAME_MAX	   128
#define PROBE_PATH_MAX	   4096
#define PROBE_FUNCTION_MAX 256
#define PROBE_LOCATION_MAX 512

/* A probe as asked for. */
struct probe_spec {
	char binary[PROBE_PATH_MAX];
	char function[PROBE_FUNCTION_MAX]; /* "" with a location */
	char location[PROBE_LOCATION_MAX]; /* "file.c:LINE", "" with a function */
	uint32_t pid;			   /* 0: every process running the binary */
	char name[PROBE_NAME_MAX];	   /* default: the function or the location */
	uint64_t threshold_ns;		   /* 0: the probe's current p95 */
	uint32_t inside;		   /* narrowed to calls of this probe, 0: none */
	enum store_latency inside_latency; /* with inside: which of its calls */
};

/*
 * Parses a request body: {"binary": PATH, "function": SYM} or {"binary": PATH, "location":
 * "file.c:LINE"}, optional "pid": N, "name": STR, "threshold": "5ms" (a duration: ns, us, ms,
 * s, m), "inside": {"probe": ID, "latency": "slow"|"fast"|"any"}. Returns 0, or -EINVAL with a
 * reason in why.
 */
int probespec__parse(const char *body, struct probe_spec *out, char *why, size_t why_len);
/*
 * The config's form of one probe: BINARY:FUNCTION or BINARY:FILE:LINE (BINARY an absolute
 * path). Returns 0, or -EINVAL with a reason in why.
 */
int probespec__parse_short(const char *s, size_t len, struct probe_spec *out, char *why,
			   size_t why_len);
/* The file and line of a location "file.c:LINE"; -EINVAL when it is not one. */
int probespec__location(const char *loc, char *file, size_t file_len, unsigned int *line);
/* "5ms", "250us", "1.5s", "100ns": nanoseconds (> 0). -EINVAL when it is not a duration. */
int probespec__duration(const char *s, uint64_t *ns);

#endif
