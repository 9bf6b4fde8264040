// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "http: " fmt

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/metrics.h"
#include "http/http.h"
#include "http/listen.h"
#include "http/webconfig.h"

#ifndef AUTOPROF_VERSION
#define AUTOPROF_VERSION "unknown"
#endif

/* Idle keep-alive connections are dropped after this; scrapers reconnect cheaply. */
#define CONNECTION_TIMEOUT_S 5
/*
 * Thread per connection: bound the threads a burst of clients can make us spawn. With at most
 * HTTP_PER_IP_CONNECTION_LIMIT per address, slow clients from a few addresses cannot fill it.
 */
#define CONNECTION_LIMIT 128
/* Bytes MHD keeps per connection for the request line and headers: the header cap. */
#define CONNECTION_MEMORY_LIMIT (32 * 1024)
#define AUTH_REALM "Basic realm=\"autoprof\", charset=\"UTF-8\""

/* Why a request or connection was refused: the reason label of autoprof_http_rejected_total. */
enum reject {
	REJECT_NONE = -1,
	REJECT_ADMIN_DISABLED,
	REJECT_CROSS_SITE,
	REJECT_CONTENT_TYPE,
	REJECT_HOST,
	REJECT_BUSY,
	REJECT_AUTH,
	REJECT_CLIENT_CERT,
	REJECT_BODY_SIZE,
	REJECT_CONNECTION_LIMIT,
	REJECT__NR,
};

static const char *const reject_names[REJECT__NR] = {
	[REJECT_ADMIN_DISABLED] = "admin_disabled",
	[REJECT_CROSS_SITE] = "cross_site",
	[REJECT_CONTENT_TYPE] = "content_type",
	[REJECT_HOST] = "host",
	[REJECT_BUSY] = "busy",
	[REJECT_AUTH] = "auth",
	[REJECT_CLIENT_CERT] = "client_cert",
	[REJECT_BODY_SIZE] = "body_size",
	[REJECT_CONNECTION_LIMIT] = "connection_limit",
};

#define CODE_MIN 100
#define CODE_MAX 599
#define NR_CODES (CODE_MAX - CODE_MIN + 1)

static const double duration_bounds[] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};
#define NR_BOUNDS (sizeof(duration_bounds) / sizeof(duration_bounds[0]))

/* One per distinct handler name; fixed size, so label sets cannot grow without bound. */
struct handler_stats {
	const char *name;
	unsigned long long codes[NR_CODES];
	unsigned long long buckets[NR_BOUNDS]; /* not cumulative: observations in (b[i-1], b[i]] */
	unsigned long long count;
	double sum;
};

struct http_server {
	struct MHD_Daemon *mhd;
	const struct http_route *routes;
	size_t nr_routes;
	void *ctx;
	int port;
	size_t *route_stats;	/* route index -> stats index */
	size_t notfound_stats;
	struct handler_stats *stats;
	size_t nr_stats;
	pthread_mutex_t stats_lock;
	struct webconfig *web;
	const struct webconfig_tls *tls;
	bool admin_api;
	bool loopback;			/* listening on 127.0.0.0/8 or ::1: Host is checked */
	unsigned int profile_queries;	/* heavy routes running now (atomic) */
	unsigned long long rejected[REJECT__NR]; /* atomic */
};

struct http_request {
	struct http_server *srv;
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	struct buf body;
	bool body_too_large;
	bool answered;
	struct timespec start;
};

const char *http__method(const struct http_request *req)
{
	return req->method;
}

const char *http__path(const struct http_request *req)
{
	return req->path;
}

const char *http__query(const struct http_request *req, const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *http__header(const struct http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *http__body(const struct http_request *req, size_t *len)
{
	*len = req->body.len;
	return req->body.data ? req->body.data : "";
}

void http__error(struct http_response *resp, int status, const char *fmt, ...)
{
	va_list ap;
	int n;

	resp->status = status;
	resp->content_type = "text/plain; charset=utf-8";
	/* Whatever the handler prepared no longer describes the body. */
	resp->content_disposition = NULL;
	resp->content_encoding = NULL;
	buf__reset(&resp->body);
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf__reserve(&resp->body, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(resp->body.data, (size_t)n + 1, fmt, ap);
	va_end(ap);
	resp->body.len = (size_t)n;
	buf__puts(&resp->body, "\n");
}

static void put_html(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			buf__puts(b, "&amp;");
			break;
		case '<':
			buf__puts(b, "&lt;");
			break;
		case '>':
			buf__puts(b, "&gt;");
			break;
		case '"':
			buf__puts(b, "&quot;");
			break;
		default:
			buf__append(b, s, 1);
		}
	}
}

void http__index(const struct http_route *routes, size_t nr_routes, struct http_response *resp)
{
	struct buf *b = &resp->body;
	size_t i;

	resp->content_type = "text/html; charset=utf-8";
	buf__puts(b, "<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>autoprof</title>"
		     "</head>\n<body>\n<h1>autoprof</h1>\n<p>Version ");
	put_html(b, AUTOPROF_VERSION);
	buf__puts(b, "</p>\n<ul>\n");
	for (i = 0; i < nr_routes; i++) {
		const struct http_route *r = &routes[i];

		if (!r->help)
			continue;
		buf__puts(b, "<li>");
		if (strcmp(r->method, "GET")) {
			/* A browser can only follow a link with GET: show the others as text. */
			buf__puts(b, "<code>");
			put_html(b, r->method);
			buf__puts(b, " ");
			put_html(b, r->path);
			buf__puts(b, "</code>");
		} else {
			buf__puts(b, "<a href=\"");
			put_html(b, r->path);
			buf__puts(b, "\">");
			put_html(b, r->path);
			buf__puts(b, "</a>");
		}
		buf__puts(b, ": ");
		put_html(b, r->help);
		buf__puts(b, "</li>\n");
	}
	buf__puts(b, "</ul>\n</body>\n</html>\n");
}

/* True when the comma-separated header value lists token (parameters such as ;q= ignored). */
static bool header_lists(const char *value, const char *token)
{
	size_t n = strlen(token);
	const char *p = value;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!strncasecmp(p, token, n) && strchr(" \t;,", p[n]))
			return true;
		p = strchr(p, ',');
	}
	return false;
}

void http__metrics(const struct http_request *req, struct http_response *resp, void *ctx)
{
	const char *accept = http__header(req, "Accept");
	const char *encoding = http__header(req, "Accept-Encoding");
	bool openmetrics = accept && header_lists(accept, "application/openmetrics-text");
	struct buf gz = {};
	int ret;

	(void)ctx;
	ret = metrics__render(&resp->body, openmetrics);
	if (ret) {
		http__error(resp, 500, "rendering metrics: %s", strerror(-ret));
		return;
	}
	resp->content_type = openmetrics ? METRICS_CONTENT_TYPE_OPENMETRICS :
					   METRICS_CONTENT_TYPE_TEXT;
	if (!encoding || !header_lists(encoding, "gzip"))
		return;
	ret = buf__gzip(resp->body.data, resp->body.len, &gz);
	if (ret) {
		/* Uncompressed is still a valid answer. */
		buf__free(&gz);
		return;
	}
	buf__free(&resp->body);
	resp->body = gz;
	resp->content_encoding = "gzip";
}

static double elapsed_s(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static void observe(struct http_server *srv, size_t h, int status, double seconds)
{
	struct handler_stats *st = &srv->stats[h];
	size_t i;

	pthread_mutex_lock(&srv->stats_lock);
	st->codes[status - CODE_MIN]++;
	for (i = 0; i < NR_BOUNDS; i++) {
		if (seconds <= duration_bounds[i]) {
			st->buckets[i]++;
			break;
		}
	}
	st->count++;
	st->sum += seconds;
	pthread_mutex_unlock(&srv->stats_lock);
}

static void render_stats(struct metrics_writer *w, void *ctx)
{
	struct http_server *srv = ctx;
	unsigned long long cumulative[NR_BOUNDS];
	char code[8];
	size_t h, i;

	pthread_mutex_lock(&srv->stats_lock);
	metrics__family(w, "autoprof_http_requests", METRIC_COUNTER,
			"HTTP requests answered, by handler and status code.");
	for (h = 0; h < srv->nr_stats; h++) {
		for (i = 0; i < NR_CODES; i++) {
			if (!srv->stats[h].codes[i])
				continue;
			snprintf(code, sizeof(code), "%zu", i + CODE_MIN);
			metrics__sample(w, (double)srv->stats[h].codes[i], "handler",
					srv->stats[h].name, "code", code, NULL);
		}
	}
	metrics__family(w, "autoprof_http_request_duration_seconds", METRIC_HISTOGRAM,
			"Time from receiving an HTTP request to queueing its response.");
	for (h = 0; h < srv->nr_stats; h++) {
		const struct handler_stats *st = &srv->stats[h];
		unsigned long long acc = 0;

		for (i = 0; i < NR_BOUNDS; i++) {
			acc += st->buckets[i];
			cumulative[i] = acc;
		}
		metrics__histogram(w, duration_bounds, cumulative, NR_BOUNDS, st->count, st->sum,
				   "handler", st->name, NULL);
	}
	pthread_mutex_unlock(&srv->stats_lock);
	metrics__family(w, "autoprof_http_rejected", METRIC_COUNTER,
			"HTTP requests and connections refused before any handler, by reason.");
	for (i = 0; i < REJECT__NR; i++)
		metrics__sample(w, (double)__atomic_load_n(&srv->rejected[i], __ATOMIC_RELAXED),
				"reason", reject_names[i], NULL);
}

static enum MHD_Result send_response(struct http_request *req, struct http_response *resp,
				     size_t stats, const char *hname, const char *hvalue)
{
	const struct webconfig_header *extra;
	size_t nr_extra = webconfig__headers(req->srv->web, &extra);
	struct MHD_Response *r;
	enum MHD_Result ret;
	double seconds;

	if (!resp->status)
		resp->status = 200;
	if (resp->status < CODE_MIN || resp->status > CODE_MAX) {
		pr_warn("%s %s: handler set status %d\n", req->method, req->path, resp->status);
		http__error(resp, 500, "internal error");
	}
	if (resp->body.len) {
		r = MHD_create_response_from_buffer_with_free_callback(resp->body.len,
								       resp->body.data, free);
		if (r)
			resp->body = (struct buf){};
	} else {
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	}
	buf__free(&resp->body);
	if (!r) {
		pr_err("%s %s: cannot create a response\n", req->method, req->path);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				resp->content_type ? resp->content_type :
						     "text/plain; charset=utf-8");
	if (resp->content_disposition)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					resp->content_disposition);
	if (resp->content_encoding)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					resp->content_encoding);
	if (hname)
		MHD_add_response_header(r, hname, hvalue);
	for (size_t i = 0; i < nr_extra; i++)
		MHD_add_response_header(r, extra[i].name, extra[i].value);
	ret = MHD_queue_response(req->conn, (unsigned int)resp->status, r);
	MHD_destroy_response(r);
	req->answered = true;

	/* Counted here rather than on completion so a client sees its own request counted. */
	seconds = elapsed_s(&req->start);
	observe(req->srv, stats, resp->status, seconds);
	pr_debug("%s %s %d %.3fms\n", req->method, req->path, resp->status, seconds * 1e3);
	return ret;
}

/* Exact, or for a route ending in a slash and a star: any one further path element. */
/* A "*" segment of a route matches one non-empty segment of the path. */
static bool path_matches(const char *route, const char *path)
{
	while (*route && *path) {
		size_t rl = strcspn(route, "/"), pl = strcspn(path, "/");

		if (!(rl == 1 && route[0] == '*' && pl) && (rl != pl || strncmp(route, path, rl)))
			return false;
		route += rl;
		path += pl;
		if (*route != *path)
			return false;
		if (*route) {
			route++;
			path++;
		}
	}
	return !*route && !*path;
}

static bool method_matches(const char *route, const char *method)
{
	return !strcmp(route, method) || (!strcmp(method, "HEAD") && !strcmp(route, "GET"));
}

static void count_reject(struct http_server *srv, enum reject why)
{
	__atomic_add_fetch(&srv->rejected[why], 1, __ATOMIC_RELAXED);
}

/* "localhost", "127.x.x.x" or "[::1]", each with an optional port: names only this host has. */
static bool loopback_host(const char *host)
{
	unsigned char addr[4];
	char name[64];
	const char *port;
	size_t len;

	if (host[0] == '[') {
		port = strchr(host, ']');
		if (!port || (size_t)(port - host - 1) >= sizeof(name))
			return false;
		len = (size_t)(port - host - 1);
		memcpy(name, host + 1, len);
		port++;
	} else {
		len = strcspn(host, ":");
		if (len >= sizeof(name))
			return false;
		memcpy(name, host, len);
		port = host + len;
	}
	name[len] = '\0';
	if (*port == ':')
		port++;
	else if (*port)
		return false;
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5)
		return false;
	if (host[0] == '[')
		return !strcmp(name, "::1");
	if (!strcasecmp(name, "localhost"))
		return true;
	return inet_pton(AF_INET, name, addr) == 1 && addr[0] == 127;
}

/* Origin is scheme://host[:port]; same-origin when it names this server as Host does. */
static bool same_origin(const char *origin, const char *host, bool tls)
{
	const char *scheme = tls ? "https://" : "http://";
	size_t n = strlen(scheme);

	return host && !strncasecmp(origin, scheme, n) && !strcasecmp(origin + n, host);
}

static bool is_json(const char *type)
{
	const size_t n = strlen("application/json");

	if (!type)
		return false;
	type += strspn(type, " \t");
	return !strncasecmp(type, "application/json", n) && strchr(" \t;", type[n]);
}

/* RequireAnyClientCert wants a certificate; the Verify* kinds want it signed by the CA. */
static bool client_cert_ok(struct http_request *req)
{
	enum webconfig_client_auth mode = req->srv->tls ? req->srv->tls->client_auth :
							   WEBCONFIG_NO_CLIENT_CERT;
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t session;
	unsigned int nr = 0, status = 0;

	if (mode == WEBCONFIG_NO_CLIENT_CERT || mode == WEBCONFIG_REQUEST_CLIENT_CERT)
		return true;
	ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	session = ci ? (gnutls_session_t)ci->tls_session : NULL;
	if (!session || !gnutls_certificate_get_peers(session, &nr) || !nr)
		return mode == WEBCONFIG_VERIFY_CLIENT_CERT_IF_GIVEN;
	if (mode == WEBCONFIG_REQUIRE_ANY_CLIENT_CERT)
		return true;
	return gnutls_certificate_verify_peers2(session, &status) >= 0 && !status;
}

static bool authenticated(struct http_request *req)
{
	char *password = NULL;
	char *user = MHD_basic_auth_get_username_password(req->conn, &password);
	bool ok = webconfig__authenticate(req->srv->web, user, password);

	if (password) {
		explicit_bzero(password, strlen(password));
		MHD_free(password);
	}
	if (user)
		MHD_free(user);
	return ok;
}

/*
 * The checks that come before any handler, for every request (the connection's certificate,
 * Host, credentials) and then for routes that change state. Fills resp and the header to add
 * when it refuses.
 */
static enum reject check_request(struct http_request *req, const struct http_route *route,
				 struct http_response *resp, const char **hname, const char **hvalue)
{
	struct http_server *srv = req->srv;
	const char *host = http__header(req, MHD_HTTP_HEADER_HOST);
	const char *origin = http__header(req, "Origin");
	const char *site = http__header(req, "Sec-Fetch-Site");
	size_t len;

	if (!client_cert_ok(req)) {
		http__error(resp, 403, "client certificate required or not signed by client_ca_file");
		return REJECT_CLIENT_CERT;
	}
	/* A page from anywhere can resolve its own name to 127.0.0.1 (DNS rebinding): on a
	 * loopback listener only the names of this host reach us. */
	if (srv->loopback && host && !loopback_host(host)) {
		http__error(resp, 421,
			    "host \"%.100s\" refused: autoprof listens on a loopback address and "
			    "answers only Host localhost, 127.x.x.x or [::1]", host);
		return REJECT_HOST;
	}
	if (webconfig__auth_required(srv->web) && !authenticated(req)) {
		http__error(resp, 401, "authentication required");
		*hname = MHD_HTTP_HEADER_WWW_AUTHENTICATE;
		*hvalue = AUTH_REALM;
		return REJECT_AUTH;
	}
	if (!route || !route->mutates)
		return REJECT_NONE;
	if (!srv->admin_api) {
		http__error(resp, 403, "admin API disabled: start autoprof with "
				       "--web.enable-admin-api");
		return REJECT_ADMIN_DISABLED;
	}
	/* A browser's request from another site must never change anything (CSRF). */
	if ((site && (!strcasecmp(site, "cross-site") || !strcasecmp(site, "same-site"))) ||
	    (origin && !same_origin(origin, host, srv->tls))) {
		http__error(resp, 403, "cross-site request refused (Origin %.100s, Sec-Fetch-Site "
				       "%.20s)", origin ? origin : "none", site ? site : "none");
		return REJECT_CROSS_SITE;
	}
	/* JSON cannot be sent cross-origin without a preflight, which we never answer: a form
	 * (or text/plain) post is refused even from a browser without the headers above. */
	http__body(req, &len);
	if ((strcmp(req->method, "DELETE") || len) &&
	    !is_json(http__header(req, MHD_HTTP_HEADER_CONTENT_TYPE))) {
		http__error(resp, 415, "Content-Type must be application/json");
		return REJECT_CONTENT_TYPE;
	}
	return REJECT_NONE;
}

static enum MHD_Result dispatch(struct http_request *req)
{
	struct http_server *srv = req->srv;
	struct http_response resp = { .status = 200 };
	const struct http_route *route = NULL;
	const char *hname = NULL, *hvalue = NULL;
	char allow[128] = "";
	size_t stats = srv->notfound_stats;
	bool known_path = false;
	enum reject why;
	size_t i;

	for (i = 0; i < srv->nr_routes; i++) {
		const struct http_route *r = &srv->routes[i];
		size_t len = strlen(allow);

		if (!path_matches(r->path, req->path))
			continue;
		if (!known_path)
			stats = srv->route_stats[i];
		known_path = true;
		if (method_matches(r->method, req->method)) {
			route = r;
			stats = srv->route_stats[i];
			break;
		}
		snprintf(allow + len, sizeof(allow) - len, "%s%s%s", len ? ", " : "", r->method,
			 strcmp(r->method, "GET") ? "" : ", HEAD");
	}

	why = check_request(req, route, &resp, &hname, &hvalue);
	if (why == REJECT_NONE && req->body_too_large) {
		http__error(&resp, 413, "request body over %u bytes", HTTP_MAX_BODY);
		why = REJECT_BODY_SIZE;
	}
	if (why != REJECT_NONE) {
		count_reject(srv, why);
		return send_response(req, &resp, stats, hname, hvalue);
	}
	if (route && route->heavy) {
		/* Each query holds a store snapshot and a symbolizer: bound how many at once. */
		if (__atomic_add_fetch(&srv->profile_queries, 1, __ATOMIC_ACQ_REL) >
		    HTTP_MAX_PROFILE_QUERIES) {
			__atomic_sub_fetch(&srv->profile_queries, 1, __ATOMIC_ACQ_REL);
			count_reject(srv, REJECT_BUSY);
			http__error(&resp, 503, "busy: %d profile queries running, retry",
				    HTTP_MAX_PROFILE_QUERIES);
			return send_response(req, &resp, stats, MHD_HTTP_HEADER_RETRY_AFTER, "1");
		}
		route->fn(req, &resp, srv->ctx);
		__atomic_sub_fetch(&srv->profile_queries, 1, __ATOMIC_ACQ_REL);
		return send_response(req, &resp, stats, NULL, NULL);
	}
	if (route) {
		route->fn(req, &resp, srv->ctx);
		return send_response(req, &resp, stats, NULL, NULL);
	}
	if (known_path) {
		http__error(&resp, 405, "method %s not allowed", req->method);
		return send_response(req, &resp, stats, MHD_HTTP_HEADER_ALLOW, allow);
	}
	http__error(&resp, 404, "not found");
	return send_response(req, &resp, stats, NULL, NULL);
}

static bool content_length_over(struct MHD_Connection *conn, unsigned long long max)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);

	return cl && strtoull(cl, NULL, 10) > max;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct http_request *req = *con_cls;

	(void)version;
	if (!req) {
		/* Headers only so far: the body, if any, arrives in the calls that follow. */
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		req->srv = cls;
		req->conn = conn;
		req->method = method;
		req->path = url;
		clock_gettime(CLOCK_MONOTONIC, &req->start);
		*con_cls = req;
		if (content_length_over(conn, HTTP_MAX_BODY)) {
			/* Answering before reading the body makes MHD close the connection after. */
			req->body_too_large = true;
			return dispatch(req);
		}
		return MHD_YES;
	}
	if (req->answered) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* Chunked bodies have no Content-Length: stop keeping them past the limit. */
		if (req->body_too_large || req->body.len + *upload_data_size > HTTP_MAX_BODY ||
		    buf__append(&req->body, upload_data, *upload_data_size))
			req->body_too_large = true;
		*upload_data_size = 0;
		return MHD_YES;
	}
	return dispatch(req);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_request *req = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (!req)
		return;
	buf__free(&req->body);
	free(req);
	*con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *srv = cls;
	static time_t last_warned;
	char msg[512];
	size_t n;

	/*
	 * MHD refuses a connection over the total or per-address limit before any callback of
	 * ours sees it; this line is its only trace. Counted, and logged once a minute at most,
	 * since a flood would otherwise flood the log too.
	 */
	if (strstr(fmt, "reached connection limit")) {
		time_t now = time(NULL);

		count_reject(srv, REJECT_CONNECTION_LIMIT);
		if (now - __atomic_load_n(&last_warned, __ATOMIC_RELAXED) < 60)
			return;
		__atomic_store_n(&last_warned, now, __ATOMIC_RELAXED);
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	pr_warn("libmicrohttpd: %s\n", msg);
}

/*
 * MHD asks for a client certificate only when it has a CA to trust; the other kinds that want
 * one (RequireAnyClientCert, RequestClientCert without a CA) ask here, before the handshake,
 * and the Require* kinds make GnuTLS fail a handshake without one.
 */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *srv = cls;
	const union MHD_ConnectionInfo *ci;
	gnutls_certificate_request_t req;

	(void)socket_ctx;
	if (code != MHD_CONNECTION_NOTIFY_STARTED || !srv->tls)
		return;
	switch (srv->tls->client_auth) {
	case WEBCONFIG_NO_CLIENT_CERT:
		return;
	case WEBCONFIG_REQUIRE_ANY_CLIENT_CERT:
	case WEBCONFIG_REQUIRE_AND_VERIFY_CLIENT_CERT:
		req = GNUTLS_CERT_REQUIRE;
		break;
	default:
		req = GNUTLS_CERT_REQUEST;
	}
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (ci && ci->tls_session)
		gnutls_certificate_server_set_request((gnutls_session_t)ci->tls_session, req);
}

static int bound_port(struct MHD_Daemon *mhd, int fd)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_BIND_PORT);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (info && info->port)
		return info->port;
	/* MHD may not know the port of a socket it did not bind itself. */
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -errno;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static size_t stats_index(struct http_server *srv, const char *name)
{
	size_t i;

	for (i = 0; i < srv->nr_stats; i++)
		if (!strcmp(srv->stats[i].name, name))
			return i;
	srv->stats[srv->nr_stats].name = name;
	return srv->nr_stats++;
}

static void server_free(struct http_server *srv)
{
	pthread_mutex_destroy(&srv->stats_lock);
	free(srv->stats);
	free(srv->route_stats);
	free(srv);
}

struct http_server *http_server__start(const char *listen, const struct http_route *routes,
				       size_t nr_routes, void *ctx, int *err)
{
	return http_server__start_opts(&(struct http_server_opts){ .listen = listen }, routes,
				       nr_routes, ctx, err);
}

struct http_server *http_server__start_opts(const struct http_server_opts *opts,
					    const struct http_route *routes, size_t nr_routes,
					    void *ctx, int *err)
{
	const char *listen = opts->listen;
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_POLL | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem mo[16];
	struct http_server *srv;
	size_t i, nr = 0;
	int fd, ret;

	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		ret = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&srv->stats_lock, NULL);
	srv->routes = routes;
	srv->nr_routes = nr_routes;
	srv->ctx = ctx;
	srv->web = opts->web;
	srv->tls = webconfig__tls(opts->web);
	srv->admin_api = opts->admin_api;
	srv->route_stats = calloc(nr_routes + 1, sizeof(*srv->route_stats));
	srv->stats = calloc(nr_routes + 1, sizeof(*srv->stats));
	if (!srv->route_stats || !srv->stats) {
		ret = -ENOMEM;
		goto free_srv;
	}
	for (i = 0; i < nr_routes; i++)
		srv->route_stats[i] = stats_index(srv, routes[i].name ? routes[i].name :
									  routes[i].path);
	srv->notfound_stats = stats_index(srv, "notfound");

	fd = http_listen__open(listen);
	if (fd < 0) {
		ret = fd;
		pr_err("listen on %s: %s\n", listen, strerror(-ret));
		goto free_srv;
	}
	srv->loopback = http_listen__loopback(fd);
#define OPT(o, v, p) (mo[nr++] = (struct MHD_OptionItem){ (o), (intptr_t)(v), (void *)(p) })
	OPT(MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv);
	OPT(MHD_OPTION_LISTEN_SOCKET, fd, NULL);
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_S, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT, NULL);
	OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, HTTP_PER_IP_CONNECTION_LIMIT, NULL);
	OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONNECTION_MEMORY_LIMIT, NULL);
	OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv);
	if (srv->tls) {
		flags |= MHD_USE_TLS;
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls->cert_pem);
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls->key_pem);
		OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, srv->tls->priorities);
		if (srv->tls->client_ca_pem)
			OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, srv->tls->client_ca_pem);
		OPT(MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv);
	}
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
	srv->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_ARRAY, mo,
				    MHD_OPTION_END);
	if (!srv->mhd) {
		ret = -EIO;
		pr_err("listen on %s: libmicrohttpd failed to start%s\n", listen,
		       srv->tls && !MHD_is_feature_supported(MHD_FEATURE_TLS) ?
			       " (this libmicrohttpd has no TLS)" : "");
		goto close_fd;
	}
	srv->port = bound_port(srv->mhd, fd);
	ret = metrics__register(render_stats, srv);
	if (ret)
		goto stop_mhd;
	pr_info("listening on %s (port %d%s%s%s)\n", listen, srv->port, srv->tls ? ", TLS" : "",
		webconfig__auth_required(srv->web) ? ", basic auth" : "",
		srv->admin_api ? ", admin API on" : "");
	return srv;

stop_mhd:
	/* MHD owns the listening socket once started and closes it here. */
	MHD_stop_daemon(srv->mhd);
	goto free_srv;
close_fd:
	close(fd);
free_srv:
	server_free(srv);
fail:
	*err = ret;
	return NULL;
}

void http_server__stop(struct http_server *srv)
{
	if (!srv)
		return;
	/* First, so no scrape reads the stats once they are freed. */
	metrics__unregister(render_stats, srv);
	MHD_stop_daemon(srv->mhd);
	server_free(srv);
}

int http_server__port(const struct http_server *srv)
{
	return srv->port;
}
