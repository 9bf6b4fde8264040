/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_STORE_H
#define AUTOPROF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/profiles.h"
#include "symbolize/frame.h"

/*
 * The time-sliced store: samples are summed per (stack, pid, tid, thread name) into slots of one
 * second, kept for the retention period, in bounded memory. It knows nothing of BPF or HTTP.
 */
struct store;

struct store_opts {
	uint64_t retention_ns;	/* how far back queries can reach */
	uint64_t memory_limit;	/* bytes; beyond it the oldest slots are dropped (and counted) */
};

/* One sample as a collector hands it over. frames are leaf first; the store takes its own refs. */
struct sample {
	enum profile_type type;
	uint32_t pid;
	uint32_t tid;
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	const char *comm;	/* thread name */
	const char *exe;	/* process executable basename */
	const char *exe_path;	/* process executable path as the process sees it, or NULL */
	const char *container_id; /* from the process's cgroup, or NULL */
	const char *service;	  /* OpenTelemetry service.name the process declares, or NULL */
	const uint8_t *trace_id;  /* 16 bytes of the thread's active span, or NULL */
	const uint8_t *span_id;	  /* 8 bytes, with trace_id */
	uint32_t probe;		  /* a probed call the sample was taken in (probes.c), 0: none */
	uint8_t latency;	  /* with probe: enum store_latency of that call */
	uint8_t gpu_api;	  /* GPU memory: enum gpu_api of the call, 0 for other samples */
	uint16_t gpu;		  /* GPU memory: the device's ordinal + 1, 0 when not known */
	const char *args;	  /* with probe: the call's captured values, "name=value" lines */
	const struct frame *frames;
	uint32_t nr_frames;
	uint64_t values[PROFILE_MAX_VALUES];
};

/* How a probed call compared with its probe's threshold when it ended. */
enum store_latency {
	STORE_LATENCY_ANY = 0, /* in a filter: either */
	STORE_LATENCY_FAST,
	STORE_LATENCY_SLOW,
};

/*
 * A sample taken inside a probed call is stored twice: as itself (probe 0, what every profile
 * shows) and, once the call ended, labelled with the probe and the call's latency class. A filter
 * selects one or the other, never both, so no query counts a sample twice.
 */
/* A comparison of one value a probe captured ("len>4096"): its calls' samples that pass it. */
enum store_where_op { STORE_WHERE_EQ, STORE_WHERE_NE, STORE_WHERE_LT, STORE_WHERE_LE,
		      STORE_WHERE_GT, STORE_WHERE_GE };

struct store_where {
	const char *name; /* a capture of the filter's probe */
	enum store_where_op op;
	int64_t value;
};

/*
 * Whether args ("name=value" lines, as struct sample's) has a value of w->name that compares
 * as w says. A value that is not a number ("optimized out") passes no comparison.
 */
bool store_where__matches(const struct store_where *w, const char *args);

struct store_filter {
	const uint32_t *pids;	/* NULL/0: any */
	size_t nr_pids;
	const char *comm;	/* NULL: any; else matches the thread name or the executable name */
	const uint8_t *trace_id; /* NULL: any; else 16 bytes the sample's span must be of */
	const uint8_t *span_id;	 /* NULL: any; else 8 bytes */
	uint32_t probe;		 /* 0: samples as taken; else the copies labelled with this probe */
	enum store_latency latency; /* with probe: the class of call */
	const struct store_where *where; /* with probe: NULL, or the captured value's test */
};

/* Whether filter (NULL: none) keeps the samples of process pid. */
bool store_filter__wants_pid(const struct store_filter *f, uint32_t pid);
/* One aggregated row of a query answer. Pointers stay valid until store_result__free(). */
struct store_row {
	const struct frame *frames;	/* leaf first */
	uint32_t nr_frames;
	uint32_t pid;
	uint32_t tid;
	const char *comm;
	const char *exe;
	uint64_t values[PROFILE_MAX_VALUES];
	const char *exe_path;	  /* "" when unknown */
	const char *container_id; /* "" when unknown */
	const uint8_t *trace_id;  /* 16 bytes, or NULL when no span was active */
	const uint8_t *span_id;	  /* 8 bytes, with trace_id */
	const char *service;	  /* "" when the process declares none */
	uint32_t probe;		  /* the filter's probe */
	uint8_t latency;	  /* enum store_latency, with probe */
	uint8_t gpu_api;	  /* as struct sample's */
	uint16_t gpu;
	const char *args;	  /* with probe: "name=value" lines of the call's captures, or "" */
};

struct store_result {
	enum profile_type type;
	uint64_t start_ns;	/* CLOCK_REALTIME of the window's start */
	uint64_t duration_ns;
	uint64_t period;	/* pprof Profile.period, in period_type units */
	size_t nr_rows;
	struct store_row *rows;
};

struct store_stats {
	uint64_t slots;
	uint64_t rows;
	uint64_t stacks;
	uint64_t frames;
	uint64_t bytes;
	uint64_t samples_added;
	uint64_t samples_dropped_nomem;
	uint64_t samples_too_old;	/* arrived after their slot was recycled */
	uint64_t slots_evicted_memory;
};

struct store *store__new(const struct store_opts *opts);
void store__free(struct store *st);	/* accepts NULL */

/* Sets the period reported for a profile type (e.g. 1e9/Hz for cpu). */
void store__set_period(struct store *st, enum profile_type type, uint64_t period);
/* Returns 0, or -ENOMEM (counted as dropped). Thread-safe. */
int store__add(struct store *st, const struct sample *s);
/*
 * Sums the samples of the last `window_ns` (ending now) that match filter.
 * Returns 0 and a result the caller frees with store_result__free(), or -ENOMEM.
 */
int store__query(struct store *st, enum profile_type type, uint64_t window_ns,
		 const struct store_filter *filter, struct store_result **out);
/*
 * The same for whole CLOCK_MONOTONIC seconds [first, last] (pushes use it to cover completed
 * seconds exactly once). -EINVAL when first > last.
 */
int store__query_secs(struct store *st, enum profile_type type, int64_t first, int64_t last,
		      const struct store_filter *filter, struct store_result **out);
/* The CLOCK_MONOTONIC second now being filled. */
int64_t store__now_sec(void);
void store_result__free(struct store_result *res);	/* accepts NULL */
/*
 * Frees rows a collector built for a live set (memory's heap, GPU memory): each row's frames
 * hold dso references and its frames, comm and exe are its own allocations. Accepts NULL.
 */
void store_rows__free(struct store_row *rows, size_t nr);
/* Drops slots older than the retention; called from the main loop about once a second. */
void store__expire(struct store *st);
void store__stats(struct store *st, struct store_stats *out);
uint64_t store__retention_ns(const struct store *st);

#endif
