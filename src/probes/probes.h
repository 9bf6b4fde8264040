/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROBES_PROBES_H
#define AUTOPROF_PROBES_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "collect/collect.h"
#include "probes/probespec.h"

/*
 * Function latency probes: uprobes on a function (entry and return) or on a source line of a
 * binary, added and removed at run time. Each call's duration goes into the probe's histogram;
 * samples the on-CPU sampler takes inside a probed call are held until the call ends, then stored
 * again labelled with the probe and whether the call was slow or fast (store.h).
 * The ingest thread drives it (events, samples, probes__tick); the API may come from any thread.
 */
struct probes;

struct probes_opts {
	uint64_t ringbuf_size; /* bytes, a power of two */
};

/* Loads the BPF object and sets ctx->probe_threads_fd for the sampler. NULL and *err on failure. */
struct probes *probes__new(const struct probes_opts *opts, struct collect_ctx *ctx, int *err);
void probes__free(struct probes *pr); /* accepts NULL */
/* Ingest thread, every drain: the latency averages, expiry of what waits too long. */
void probes__tick(struct probes *pr);
/*
 * Ingest thread: smp (already stored as taken) was taken inside the probed calls
 * probe[0, n) that began at start[0, n), outermost first.
 */
void probes__sample(struct probes *pr, const struct sample *smp, uint32_t n, const uint32_t *probe,
		    const uint64_t *start);

/*
 * API: resolves and attaches a probe. 0 and *id; -EINVAL (why says what is wrong with the
 * request: unknown binary, symbol, location, enclosing probe), or another negative errno (why
 * too).
 */
int probes__add(struct probes *pr, const struct probe_spec *spec, uint32_t *id, char *why,
		size_t why_len);
/* API: detaches and forgets probe id. 0 or -ENOENT. */
int probes__remove(struct probes *pr, uint32_t id);
bool probes__exists(struct probes *pr, uint32_t id);
/* Whether probe id captures a value called name ("capture" of its request). */
bool probes__captures(struct probes *pr, uint32_t id, const char *name);
/* API: {"probes": [...]} appended to out. */
int probes__list(struct probes *pr, struct buf *out);
/*
 * API: the latency of probe id over the last `seconds` (JSON) appended to out; with group_by
 * (one of its captures, or NULL) also per value of it. 0, -ENOENT (no such probe) or -EINVAL
 * (group_by is not a capture), why saying which.
 */
int probes__latency(struct probes *pr, uint32_t id, unsigned int seconds, const char *group_by,
		    struct buf *out, char *why, size_t why_len);
/* The longest window probes__latency covers. */
#define PROBES_MAX_SECONDS 300

/*
 * The config's probes (probes key: BINARY:FUNCTION or BINARY:FILE:LINE, comma-separated):
 * check parses and resolves them without attaching anything, add attaches them. 0, or a
 * negative errno with the reason in why.
 */
int probes__check_configured(const char *list, char *why, size_t why_len);
int probes__add_configured(struct probes *pr, const char *list, char *why, size_t why_len);

struct probes_stats {
	unsigned long long calls, hits, outside, nest_full, unmatched, drop_ringbuf;
	unsigned long long samples_labelled, samples_expired, samples_dropped, narrowed_out;
	unsigned int probes;
};
void probes__stats(struct probes *pr, struct probes_stats *out);

#endif
