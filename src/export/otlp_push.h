/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_OTLP_PUSH_H
#define AUTOPROF_OTLP_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

/*
 * Periodic OTLP/HTTP push to a collector, on its own thread: every interval it asks the
 * caller for a payload (collect), queues it, and sends the queue oldest first with
 * `POST {endpoint}/v1development/profiles`, `Content-Type: application/x-protobuf`, optional
 * gzip and extra headers. 429/502/503/504 and network errors are retried with exponential
 * backoff (Retry-After honoured); other 4xx are dropped; partial_success rejections are
 * counted. The queue is bounded in bytes: the oldest batches are dropped first when full, so
 * memory does not grow with an outage.
 */
struct otlp_pusher;

struct otlp_header {
	const char *name;
	const char *value;
};

struct otlp_push_opts {
	const char *endpoint;	/* e.g. "http://collector:4318" (the path is appended) */
	uint64_t interval_ns;	/* how often collect() runs */
	uint64_t timeout_ns;	/* per request */
	uint64_t queue_bytes;	/* bound on queued, unsent payloads */
	bool gzip;
	const struct otlp_header *headers;
	size_t nr_headers;
	/* TLS to an https:// collector, PEM files; NULL or "": libcurl's defaults. */
	const char *ca_file;	/* CAs that verify the collector instead of the system's */
	const char *cert_file;	/* client certificate (mutual TLS) */
	const char *key_file;	/* its private key */
	/* free() first collects and sends what is left, for at most this long; 0: drops it. */
	uint64_t shutdown_timeout_ns;
};

/* Fills out with one encoded request (uncompressed) for the last window_ns; returns 0, or a
 * negative errno (nothing is queued). Runs on the pusher's thread. */
typedef int (*otlp_collect_fn)(uint64_t window_ns, struct buf *out, void *ctx);

struct otlp_push_stats {
	uint64_t batches_queued;
	uint64_t batches_sent;
	uint64_t batches_dropped_queue_full; /* oldest dropped to stay within queue_bytes */
	uint64_t batches_dropped_rejected;   /* a non-retryable answer (400, 401, 404, ...) */
	uint64_t retries;
	uint64_t failures_network;	     /* connect/timeout/reset */
	uint64_t failures_http;		     /* non-2xx answers */
	uint64_t profiles_rejected;	     /* partial_success.rejected_profiles */
	uint64_t bytes_sent;		     /* on the wire (after gzip) */
	uint64_t queue_bytes;		     /* now */
	uint64_t queue_batches;		     /* now */
	uint64_t collect_errors;
};

/* Starts the thread. Returns NULL with *err set (-EINVAL: bad endpoint). Options are copied. */
struct otlp_pusher *otlp_pusher__new(const struct otlp_push_opts *opts, otlp_collect_fn collect,
				     void *ctx, int *err);
/*
 * Stops, then frees. With a shutdown_timeout_ns, one last collect and what is queued are sent
 * first, within that time (a request still in flight at its end is aborted); without, within
 * about a second (an in-flight request is aborted) and the queue is dropped. Accepts NULL.
 */
void otlp_pusher__free(struct otlp_pusher *p);
void otlp_pusher__stats(struct otlp_pusher *p, struct otlp_push_stats *out);

#endif
