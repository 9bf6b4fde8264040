/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DAEMON_H
#define AUTOPROF_DAEMON_H

#include "collect/collect.h"
#include "config/config.h"

struct http_server;
struct oncpu;
struct proc_collector;

/* Everything the running daemon holds; HTTP handlers and metrics read it. */
struct daemon {
	struct config cfg;
	struct collect_ctx ctx; /* store, proctab, symbolizer, ring buffers */
	struct proc_collector *procs;
	struct oncpu *oncpu;
	struct http_server *http;
};

/* src/http/routes.c: starts the HTTP server with autoprof's one route table. */
int routes__start(struct daemon *d);
/* src/selfmetrics.c: registers autoprof's own metrics. */
int selfmetrics__register(struct daemon *d);

#endif
