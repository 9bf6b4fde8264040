/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_HTTP_H
#define AUTOPROF_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

/* The HTTP server (libmicrohttpd, thread per connection) and its one route table. */
struct http_request;

struct http_response {
	int status;			/* default 200 */
	const char *content_type;	/* default "text/plain; charset=utf-8" */
	const char *content_disposition;/* optional */
	const char *content_encoding;	/* optional */
	struct buf body;
};

typedef void (*http_handler)(const struct http_request *req, struct http_response *resp,
			     void *ctx);

struct http_route {
	const char *method;	/* "GET", "POST", ... */
	const char *path;	/* exact path; a "*" segment matches any one segment */
	const char *name;	/* the "handler" label in autoprof_http_requests_total */
	const char *help;	/* one line for the index page; NULL: not listed */
	http_handler fn;
	/* Changes state: refused unless the admin API is on, and then only same-origin JSON. */
	bool mutates;
	/* Builds a profile: at most HTTP_MAX_PROFILE_QUERIES run at once, 503 past that. */
	bool heavy;
};

struct http_server;
struct webconfig;

/* Connections one client address may hold; a burst from one host cannot starve the others. */
#define HTTP_PER_IP_CONNECTION_LIMIT 16
#define HTTP_MAX_PROFILE_QUERIES 4

struct http_server_opts {
	const char *listen;
	/* TLS, basic auth, extra headers (--web.config.file); NULL: plain HTTP. Must outlive
	 * the server. */
	struct webconfig *web;
	bool admin_api; /* --web.enable-admin-api: routes that mutate may run */
};

/*
 * listen: "[host]:port", ":9740" meaning every address. Routes are copied by pointer and must
 * outlive the server. Unknown paths answer 404, a known path with another method 405 (a GET
 * route also answers HEAD). The server registers autoprof_http_requests_total and
 * autoprof_http_request_duration_seconds with metrics__register until http_server__stop, so run
 * one server per process.
 * Returns NULL and sets *err to a negative errno (-EADDRINUSE, -EINVAL for a bad address).
 */
struct http_server *http_server__start(const char *listen, const struct http_route *routes,
				       size_t nr_routes, void *ctx, int *err);
/*
 * The same with the web configuration and the admin API switch. Every request is checked, in
 * order: client certificate (TLS), Host against DNS rebinding (loopback listeners only), basic
 * auth, then for a mutating route: admin API on, not cross-site (Sec-Fetch-Site, Origin), a
 * JSON Content-Type; each refusal is counted in autoprof_http_rejected_total{reason}.
 */
struct http_server *http_server__start_opts(const struct http_server_opts *opts,
					    const struct http_route *routes, size_t nr_routes,
					    void *ctx, int *err);
void http_server__stop(struct http_server *srv);	/* accepts NULL */
/* The bound port (useful with ":0"). */
int http_server__port(const struct http_server *srv);

const char *http__method(const struct http_request *req);
const char *http__path(const struct http_request *req);
/* Query parameter or NULL. */
const char *http__query(const struct http_request *req, const char *key);
/* Request header (case-insensitive) or NULL. */
const char *http__header(const struct http_request *req, const char *name);
/*
 * The request body (POST, ...), NUL-terminated, *len bytes; "" when there is none. Bodies over
 * HTTP_MAX_BODY are refused with 413 before any handler runs.
 */
#define HTTP_MAX_BODY (1u << 20)
const char *http__body(const struct http_request *req, size_t *len);
/* Sets status and a text/plain body "reason\n". */
void http__error(struct http_response *resp, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Writes the index page listing every route with a help line (HTML). */
void http__index(const struct http_route *routes, size_t nr_routes, struct http_response *resp);
/*
 * A ready-made /metrics handler: renders every registered metric, as OpenMetrics when the
 * Accept header asks for it, gzip-compressed when Accept-Encoding allows it.
 */
void http__metrics(const struct http_request *req, struct http_response *resp, void *ctx);

#endif
