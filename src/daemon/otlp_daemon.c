// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon's OTLP push: every otlp.interval the pusher's thread asks for the profiles of the
 * seconds completed since the last push (each second goes out once), encoded as one
 * ExportProfilesServiceRequest.
 */
#define pr_fmt(fmt) "otlp: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "export/otlp.h"
#include "export/otlp_headers.h"
#include "export/otlp_push.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/timeconst.h"
#include "query/query.h"
#include "store/store.h"

/*
 * Samples reach the store up to a drain interval (100 ms) after they were taken, and later
 * while the ingest thread is busy: a second is pushed only once it ended this long ago, or its
 * late samples would miss the push that sent it (and never go out).
 */
#define SETTLE_NS (500 * NSEC_PER_MSEC)

static int collect(uint64_t window_ns, struct buf *out, void *ctx)
{
	struct daemon *d = ctx;
	struct otlp_state *o = &d->otlp;
	const struct query_sources src = { .store = d->ctx.store,
					   .memory = d->memory,
					   .gpumem = d->gpumem };
	const struct store_result *results[PROFILE__MAX];
	struct query_result *qrs[PROFILE__MAX];
	struct query_window w;
	int64_t last = (int64_t)((now_ns() - SETTLE_NS) / NSEC_PER_SEC) - 1;
	int64_t oldest = last - (int64_t)(d->cfg.profile_retention_ns / NSEC_PER_SEC) + 1;
	int64_t first = o->next_sec ? o->next_sec : last - (int64_t)(window_ns / NSEC_PER_SEC) + 1;
	struct otlp_host host = { .host_name = o->host_name, .scope_version = AUTOPROF_VERSION };
	size_t n = 0;
	int err = 0;

	if (first < oldest)
		first = oldest;
	if (first > last)
		return -EAGAIN;
	w = (struct query_window){ .first_sec = first, .last_sec = last };
	for (unsigned int t = 0; t < PROFILE__MAX; t++) {
		/* A view of cpu samples at query time, never stored. */
		if (t == PROFILE_LATENCY)
			continue;
		/* heap: the live allocations at this push, beside the seconds' allocations. */
		err = query__profile(&src, t, &w, NULL, &qrs[n]);
		if (err)
			goto out_free;
		results[n] = query_result__rows(qrs[n]);
		n++;
	}
	err = otlp__encode(results, n, d->ctx.sym, &host, out);
	if (!err)
		o->next_sec = last + 1;
out_free:
	while (n)
		query_result__free(qrs[--n]);
	return err;
}

/* "A=x,B=y" into name/value pairs pointing into a copy the state owns. */
static int parse_headers(struct otlp_state *o, const char *spec)
{
	char *save = NULL, *tok;

	o->headers_buf = strdup(spec);
	if (!o->headers_buf)
		return -ENOMEM;
	for (tok = strtok_r(o->headers_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		struct otlp_header *h;

		if (!eq)
			continue; /* config validation rejects this */
		h = realloc(o->headers, (o->nr_headers + 1) * sizeof(*h));
		if (!h)
			return -ENOMEM;
		o->headers = h;
		*eq = '\0';
		o->headers[o->nr_headers++] = (struct otlp_header){ tok, eq + 1 };
	}
	return 0;
}

/* otlp.headers-file's headers after the flag's (validated at start, read again here). */
static int add_file_headers(struct otlp_state *o, const char *path)
{
	struct otlp_header *file = NULL, *h;
	char why[512] = "";
	size_t nr = 0;
	int err;

	if (!*path)
		return 0;
	err = otlp_headers__read_file(path, &o->headers_file_buf, &file, &nr, why, sizeof(why));
	if (err) {
		pr_err("otlp.headers-file: %s\n", why);
		return err;
	}
	if (!nr)
		return 0;
	h = realloc(o->headers, (o->nr_headers + nr) * sizeof(*h));
	if (!h) {
		free(file);
		return -ENOMEM;
	}
	o->headers = h;
	memcpy(o->headers + o->nr_headers, file, nr * sizeof(*h));
	o->nr_headers += nr;
	free(file);
	return 0;
}

static const struct metrics_row push_rows[] = {
	METRICS_FAMILY("autoprof_otlp_batches", METRIC_COUNTER,
		       "OTLP push batches by outcome: queued, sent, dropped_queue_full (oldest "
		       "dropped while the collector was unreachable), dropped_rejected (a "
		       "non-retryable answer)"),
	METRICS_SAMPLE(struct otlp_push_stats, batches_queued, "outcome", "queued"),
	METRICS_SAMPLE(struct otlp_push_stats, batches_sent, "outcome", "sent"),
	METRICS_SAMPLE(struct otlp_push_stats, batches_dropped_queue_full, "outcome",
		       "dropped_queue_full"),
	METRICS_SAMPLE(struct otlp_push_stats, batches_dropped_rejected, "outcome",
		       "dropped_rejected"),
	METRICS_FAMILY("autoprof_otlp_retries", METRIC_COUNTER,
		       "OTLP push attempts retried (429, 502, 503, 504, network errors)"),
	METRICS_SAMPLE(struct otlp_push_stats, retries),
	METRICS_FAMILY("autoprof_otlp_failures", METRIC_COUNTER,
		       "Failed OTLP push attempts by kind"),
	METRICS_SAMPLE(struct otlp_push_stats, failures_network, "kind", "network"),
	METRICS_SAMPLE(struct otlp_push_stats, failures_http, "kind", "http"),
	METRICS_FAMILY("autoprof_otlp_profiles_rejected", METRIC_COUNTER,
		       "Profiles the collector rejected in a partial success"),
	METRICS_SAMPLE(struct otlp_push_stats, profiles_rejected),
	METRICS_FAMILY("autoprof_otlp_sent_bytes", METRIC_COUNTER,
		       "Bytes of OTLP requests delivered (after compression)"),
	METRICS_SAMPLE(struct otlp_push_stats, bytes_sent),
	METRICS_FAMILY("autoprof_otlp_queue_bytes", METRIC_GAUGE,
		       "Bytes of OTLP requests waiting for the collector"),
	METRICS_SAMPLE(struct otlp_push_stats, queue_bytes),
	METRICS_FAMILY("autoprof_otlp_queue_batches", METRIC_GAUGE,
		       "OTLP requests waiting for the collector"),
	METRICS_SAMPLE(struct otlp_push_stats, queue_batches),
	METRICS_FAMILY("autoprof_otlp_collect_errors", METRIC_COUNTER,
		       "Pushes that could not be built (out of memory)"),
	METRICS_SAMPLE(struct otlp_push_stats, collect_errors),
};

static void push_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct otlp_push_stats s;

	if (!d->otlp.pusher)
		return;
	otlp_pusher__stats(d->otlp.pusher, &s);
	METRICS_TABLE(w, push_rows, &s);
}

int otlp_daemon__start(struct daemon *d)
{
	struct otlp_state *o = &d->otlp;
	struct otlp_push_opts opts;
	int err;

	if (!d->cfg.otlp_endpoint[0])
		return 0;
	if (gethostname(o->host_name, sizeof(o->host_name) - 1))
		strcpy(o->host_name, "unknown");
	err = parse_headers(o, d->cfg.otlp_headers);
	if (err)
		return err;
	err = add_file_headers(o, d->cfg.otlp_headers_file);
	if (err)
		return err;
	opts = (struct otlp_push_opts){
		.endpoint = d->cfg.otlp_endpoint,
		.interval_ns = d->cfg.otlp_interval_ns,
		.timeout_ns = d->cfg.otlp_timeout_ns,
		.queue_bytes = d->cfg.otlp_queue_size,
		.gzip = d->cfg.otlp_gzip,
		.headers = o->headers,
		.nr_headers = o->nr_headers,
		.ca_file = d->cfg.otlp_ca_file,
		.cert_file = d->cfg.otlp_cert_file,
		.key_file = d->cfg.otlp_key_file,
		.shutdown_timeout_ns = d->cfg.otlp_shutdown_timeout_ns,
	};
	o->pusher = otlp_pusher__new(&opts, collect, d, &err);
	if (!o->pusher) {
		pr_err("cannot start pushing to %s: %s\n", d->cfg.otlp_endpoint, strerror(-err));
		return err;
	}
	pr_info("pushing profiles to %s every %llu s\n", d->cfg.otlp_endpoint,
		(unsigned long long)(d->cfg.otlp_interval_ns / NSEC_PER_SEC));
	return 0;
}

void otlp_daemon__stop(struct daemon *d)
{
	otlp_pusher__free(d->otlp.pusher);
	d->otlp.pusher = NULL;
	free(d->otlp.headers);
	free(d->otlp.headers_buf);
	free(d->otlp.headers_file_buf);
}

int otlp_daemon__register_metrics(struct daemon *d)
{
	return metrics__register(push_metrics, d);
}
