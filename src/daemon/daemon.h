/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DAEMON_DAEMON_H
#define AUTOPROF_DAEMON_DAEMON_H

#include "collect/collect.h"
#include "config/config.h"

struct http_server;
struct otlp_header;
struct otlp_pusher;
struct oncpu;
struct offcpu;
struct memory;
struct gpumem;
struct history;
struct jvm;
struct probes;
struct proc_collector;
struct webconfig;

struct otlp_state {
	struct otlp_pusher *pusher; /* NULL when otlp.endpoint is empty */
	char host_name[256];
	struct otlp_header *headers;
	size_t nr_headers;
	char *headers_buf;
	char *headers_file_buf; /* otlp.headers-file's text, which file headers point into */
	long long next_sec; /* first CLOCK_MONOTONIC second not pushed yet; 0 before the first */
};

/* Everything the running daemon holds; HTTP handlers and metrics read it. */
struct daemon {
	struct config cfg;
	struct collect_ctx ctx; /* store, proctab, symbolizer, ring buffers */
	struct proc_collector *procs;
	struct oncpu *oncpu;
	struct offcpu *offcpu; /* NULL when the kernel cannot run it and it is off */
	struct memory *memory;
	struct gpumem *gpumem; /* NULL when gpu.enabled is false */
	struct history *history; /* NULL when storage.path is empty or unusable */
	struct jvm *jvm; /* NULL when jvm.perf-map is off */
	struct probes *probes;
	struct http_server *http;
	struct webconfig *web; /* --web.config.file, NULL without one */
	struct otlp_state otlp;
	/* Set (atomically) after the ingest loop's first drain: /metrics says it samples. */
	bool ingesting;
	/* Set (atomically) once startup is done (samplers attached, the processes running at
	 * start scanned, their unwind tables built and trace contexts found): /-/ready. */
	bool ready;
	uint64_t scan_mark; /* the unwinder's queue after the scan (unwinder__queue_mark) */
};

/* src/daemon/routes.c: starts the HTTP server with autoprof's one route table. */
int routes__start(struct daemon *d);
/* src/daemon/selfmetrics.c: registers autoprof's own metrics. */
int selfmetrics__register(struct daemon *d);
/* src/daemon/otlp_daemon.c: starts the OTLP push when otlp.endpoint is set (a no-op otherwise). */
int otlp_daemon__start(struct daemon *d);
void otlp_daemon__stop(struct daemon *d);
int otlp_daemon__register_metrics(struct daemon *d);

#endif
