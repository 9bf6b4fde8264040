/* DEPS: src/http/server.c src/http/listen.c src/http/webconfig.c src/lib/metrics.c src/lib/buf.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http/http.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "testlib.h"

static void hello(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	buf__puts(&resp->body, "hello\n");
}

static void counted(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	buf__puts(&resp->body, "counted\n");
}

static void echo(const struct http_request *req, struct http_response *resp, void *ctx)
{
	const char *a = http__query(req, "a");
	const char *h = http__header(req, "x-test-header");

	(void)ctx;
	buf__printf(&resp->body, "a=%s h=%s ctx=%s", a ? a : "(null)", h ? h : "(null)",
		    (const char *)ctx);
}

static void upload(const struct http_request *req, struct http_response *resp, void *ctx)
{
	size_t len;
	const char *body = http__body(req, &len);
	unsigned long sum = 0;

	(void)ctx;
	for (size_t i = 0; i < len; i++)
		sum += (unsigned char)body[i];
	resp->status = 201;
	buf__printf(&resp->body, "%s got %zu bytes sum %lu", http__method(req), len, sum);
}

static void download(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	resp->content_type = "application/octet-stream";
	resp->content_disposition = "attachment; filename=\"x.bin\"";
	buf__append(&resp->body, "\0\1\2", 3);
}

static void bad_status(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	resp->status = 42;
}

static void failing(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)ctx;
	resp->content_encoding = "gzip";
	buf__puts(&resp->body, "half-done");
	http__error(resp, 503, "%s is %s", http__path(req), "unavailable");
}

static void index_page(const struct http_request *req, struct http_response *resp, void *ctx);

static void slow_profile(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	usleep(400 * 1000);
	buf__puts(&resp->body, "profile\n");
}

/* Routes for the admin API and the query bound, on a server of their own. */
static const struct http_route admin_routes[] = {
	{ "GET", "/state", "state", NULL, .fn = hello },
	{ "POST", "/state", "state", NULL, .fn = upload, .mutates = true },
	{ "DELETE", "/state/*", "state", NULL, .fn = hello, .mutates = true },
	{ "GET", "/profile", "profile", NULL, .fn = slow_profile, .heavy = true },
};

static const struct http_route routes[] = {
	{ "GET", "/", "index", NULL, .fn = index_page },
	{ "GET", "/hello", "hello", "Says <hello> & more", .fn = hello },
	{ "GET", "/counted", "counted", "Counts", .fn = counted },
	{ "GET", "/echo", "echo", "Echoes a query parameter", .fn = echo },
	{ "POST", "/upload", "upload", "Takes a body", .fn = upload },
	{ "PUT", "/upload", "upload", NULL, .fn = upload },
	{ "GET", "/download", "download", NULL, .fn = download },
	{ "GET", "/bad", "bad", NULL, .fn = bad_status },
	{ "GET", "/failing", "failing", NULL, .fn = failing },
	{ "GET", "/metrics", "metrics", "Prometheus metrics", .fn = http__metrics },
	{ "GET", "/items/*/size", "item_size", NULL, .fn = hello },
};
#define NR_ROUTES (sizeof(routes) / sizeof(routes[0]))

static void index_page(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	http__index(routes, NR_ROUTES, resp);
}

static struct http_server *srv;
static int port;
static int fds_before_start;
static char tmpdir[] = "/tmp/test_http.XXXXXX";

struct reply {
	int status;
	char headers[4096];
	struct buf body;
};

/* Runs curl -i with the given arguments against the server; 0 when curl produced a response. */
static int curl(struct reply *r, const char *fmt, ...)
{
	char args[1024], cmd[1280];
	struct buf out = {};
	char chunk[4096];
	const char *p, *end;
	va_list ap;
	size_t n;
	FILE *f;

	memset(r, 0, sizeof(*r));
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "curl -sS -i --max-time 10 %s", args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf__append(&out, chunk, n);
	pclose(f);
	if (!out.data)
		return -1;
	p = out.data;
	for (;;) {
		end = strstr(p, "\r\n\r\n");
		if (strncmp(p, "HTTP/", 5) || !end) {
			buf__free(&out);
			return -1;
		}
		r->status = atoi(strchr(p, ' ') + 1);
		/* Skip interim responses such as 100 Continue. */
		if (r->status >= 200)
			break;
		p = end + 4;
	}
	snprintf(r->headers, sizeof(r->headers), "%.*s", (int)(end - p + 2), p);
	buf__append(&r->body, end + 4, out.len - (size_t)(end + 4 - out.data));
	if (!r->body.data)
		buf__puts(&r->body, "");
	buf__free(&out);
	return 0;
}

/* A response header's value, or "" when missing. */
static const char *header(struct reply *r, const char *name, char *dst, size_t size)
{
	size_t n = strlen(name);
	const char *p = r->headers;

	dst[0] = '\0';
	while ((p = strstr(p, "\r\n"))) {
		p += 2;
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			const char *v = p + n + 1, *e;

			while (*v == ' ')
				v++;
			e = strstr(v, "\r\n");
			snprintf(dst, size, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
			break;
		}
	}
	return dst;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int count_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static bool have_ipv6_loopback(void)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = !bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return ok;
}

TEST(start)
{
	int err = 0;

	fds_before_start = count_fds();
	srv = http_server__start("127.0.0.1:0", routes, NR_ROUTES, "the-ctx", &err);
	CHECK(srv);
	CHECK_EQ(err, 0);
	port = http_server__port(srv);
	CHECK(port > 0 && port < 65536);
}

TEST(get_ok)
{
	struct reply r;
	char v[256];

	if (!srv)
		SKIP("no server");
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/hello", port), 0);
	CHECK_EQ(r.status, 200);
	CHECK_STR(r.body.data, "hello\n");
	CHECK_STR(header(&r, "Content-Type", v, sizeof(v)), "text/plain; charset=utf-8");
	CHECK_STR(header(&r, "Content-Length", v, sizeof(v)), "6");
	CHECK_STR(header(&r, "Content-Disposition", v, sizeof(v)), "");
	buf__free(&r.body);
}

TEST(head_uses_get_route)
{
	struct reply r;
	char v[256];

	if (!srv)
		SKIP("no server");
	CHECK_EQ(curl(&r, "-I http://127.0.0.1:%d/hello", port), 0);
	CHECK_EQ(r.status, 200);
	CHECK_STR(r.body.data, "");
	CHECK_STR(header(&r, "Content-Length", v, sizeof(v)), "6");
	buf__free(&r.body);
}

TEST(query_and_header)
{
	struct reply r;

	if (!srv)
		SKIP("no server");
	CHECK_EQ(curl(&r, "-H 'X-Test-Header: Yes please' 'http://127.0.0.1:%d/echo?x=1&a=b%%20c'",
		      port),
		 0);
	CHECK_EQ(r.status, 200);
	CHECK_STR(r.body.data, "a=b c h=Yes please ctx=the-ctx");
	buf__free(&r.body);
	CHECK_EQ(curl(&r, "'http://127.0.0.1:%d/echo?a=%%26%%3D%%2B+x'", port), 0);
	CHECK_STR(r.body.data, "a=&=+ x h=(null) ctx=the-ctx");
	buf__free(&r.body);
}

TEST(not_found)
{
	struct reply r;
	char v[256];

	if (!srv)
		SKIP("no server");
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/nope", port), 0);
	CHECK_EQ(r.status, 404);
	CHECK_STR(r.body.data, "not found\n");
	CHECK_STR(header(&r, "Content-Type", v, sizeof(v)), "text/plain; charset=utf-8");
	buf__free(&r.body);
	/* Exact match only: no prefix or trailing-slash leniency. */
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/hello/", port), 0);
	CHECK_EQ(r.status, 404);
	buf__free(&r.body);
}

/* A "*" segment matches one whole, non-empty segment, in the middle of a route too. */
TEST(wildcard_segment)
{
	static const char *const miss[] = { "/items//size", "/items/3", "/items/3/size/x",
					    "/items/3/sizes", "/items/3/4/size" };
	struct reply r;

	if (!srv)
		SKIP("no server");
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/items/42/size", port), 0);
	CHECK_EQ(r.status, 200);
	buf__free(&r.body);
	for (size_t i = 0; i < sizeof(miss) / sizeof(miss[0]); i++) {
		CHECK_EQ(curl(&r, "http://127.0.0.1:%d%s", port, miss[i]), 0);
		CHECK_EQ(r.status, 404);
		buf__free(&r.body);
	}
}

TEST(method_not_allowed)
{
	struct reply r;
	char v[256];

	if (!srv)
		SKIP("no server");
	CHECK_EQ(curl(&r, "-X DELETE http://127.0.0.1:%d/hello", port), 0);
	CHECK_EQ(r.status, 405);
	CHECK_STR(header(&r, "Allow", v, sizeof(v)), "GET, HEAD");
	CHECK(strstr(r.body.data, "DELETE"));
	buf__free(&r.body);
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/upload", port), 0);
	CHECK_EQ(r.status, 405);
	CHECK_STR(header(&r, "Allow", v, sizeof(v)), "POST, PUT");
	buf__free(&r.body);
}

TEST(post_body)
{
	char path[256], byte[1];
	unsigned long sum = 0;
	struct reply r;
	char want[128];
	FILE *f;

	if (!srv)
		SKIP("no server");
	snprintf(path, sizeof(path), "%s/body", tmpdir);
	f = fopen(path, "w");
	CHECK(f);
	for (int i = 0; i < 300000; i++) {
		byte[0] = (char)(i * 7);
		sum += (unsigned char)byte[0];
		fwrite(byte, 1, 1, f);
	}
	fclose(f);
	CHECK_EQ(curl(&r, "--data-binary @%s http://127.0.0.1:%d/upload", path, port), 0);
	CHECK_EQ(r.status, 201);
	snprintf(want, sizeof(want), "POST got 300000 bytes sum %lu", sum);
	CHECK_STR(r.body.data, want);
	buf__free(&r.body);
	CHECK_EQ(curl(&r, "-X PUT http://127.0.0.1:%d/upload", port), 0);
	CHECK_EQ(r.status, 201);
	CHECK_STR(r.body.data, "PUT got 0 bytes sum 0");
	buf__free(&r.body);
	/* A body on a 404 is read and dropped, not left hanging. */
	CHECK_EQ(curl(&r, "--data-binary @%s http://127.0.0.1:%d/nope", path, port), 0);
	CHECK_EQ(r.status, 404);
	buf__free(&r.body);
}

TEST(post_body_too_large)
{
	char path[256];
	struct reply r;
	double t0;
	FILE *f;

	if (!srv)
		SKIP("no server");
	snprintf(path, sizeof(path), "%s/big", tmpdir);
	f = fopen(path, "w");
	CHECK(f);
	for (int i = 0; i < 3 * 1024; i++)
		fprintf(f, "%01023d\n", i);
	fclose(f);
	t0 = now_s();
	/* With a Content-Length: refused before the body is read. */
	CHECK_EQ(curl(&r, "--data-binary @%s http://127.0.0.1:%d/upload", path, port), 0);
	CHECK_EQ(r.status, 413);
	buf__free(&r.body);
	/* Chunked: no length up front, so refused once the limit is crossed. */
	CHECK_EQ(curl(&r, "-H 'Transfer-Encoding: chunked' --data-binary @%s "
			  "http://127.0.0.1:%d/upload",
		      path, port),
		 0);
	CHECK_EQ(r.status, 413);
	buf__free(&r.body);
	CHECK(now_s() - t0 < 5);
}

TEST(response_fields)
{
	struct reply r;
	char v[256];

	if (!srv)
		SKIP("no server");
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/download", port), 0);
	CHECK_EQ(r.status, 200);
	CHECK_STR(header(&r, "Content-Type", v, sizeof(v)), "application/octet-stream");
	CHECK_STR(header(&r, "Content-Disposition", v, sizeof(v)), "attachment; filename=\"x.bin\"");
	CHECK_EQ(r.body.len, 3);
	CHECK(!memcmp(r.body.data, "\0\1\2", 3));
	buf__free(&r.body);

	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/bad", port), 0);
	CHECK_EQ(r.status, 500);
	buf__free(&r.body);

	/* http__error drops what the handler had set up for its own body. */
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/failing", port), 0);
	CHECK_EQ(r.status, 503);
	CHECK_STR(r.body.data, "/failing is unavailable\n");
	CHECK_STR(header(&r, "Content-Encoding", v, sizeof(v)), "");
	buf__free(&r.body);
}

TEST(index_lists_routes)
{
	struct reply r;
	char v[256];

	if (!srv)
		SKIP("no server");
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/", port), 0);
	CHECK_EQ(r.status, 200);
	CHECK_STR(header(&r, "Content-Type", v, sizeof(v)), "text/html; charset=utf-8");
	CHECK(strstr(r.body.data, "<title>autoprof</title>"));
	CHECK(strstr(r.body.data, "<a href=\"/hello\">/hello</a>: Says &lt;hello&gt; &amp; more"));
	CHECK(strstr(r.body.data, "<a href=\"/metrics\">/metrics</a>: Prometheus metrics"));
	CHECK(strstr(r.body.data, "<a href=\"/echo\">"));
	CHECK(strstr(r.body.data, "POST /upload"));
	CHECK(strstr(r.body.data, AUTOPROF_VERSION));
	/* Routes without a help line stay unlisted. */
	CHECK(!strstr(r.body.data, "/download"));
	CHECK(!strstr(r.body.data, "/bad"));
	buf__free(&r.body);
}

/* Runs promtool on text; 0 when it exits 0 and prints nothing. */
static int promtool_clean(const char *text, char *msg, size_t size)
{
	char path[256], cmd[512];
	size_t n;
	FILE *f;
	int st;

	snprintf(path, sizeof(path), "%s/metrics.txt", tmpdir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(msg, 1, size - 1, f);
	msg[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) && !WEXITSTATUS(st) && !n ? 0 : 1;
}

TEST(request_metrics)
{
	struct buf out = {};
	struct reply r;
	char msg[2048];
	char v[256];

	if (!srv)
		SKIP("no server");
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(curl(&r, "http://127.0.0.1:%d/counted", port), 0);
		CHECK_EQ(r.status, 200);
		buf__free(&r.body);
	}
	CHECK_EQ(metrics__render(&out, false), 0);
	CHECK(strstr(out.data, "\nautoprof_http_requests_total{handler=\"counted\",code=\"200\"} 2\n"));
	CHECK(strstr(out.data, "\nautoprof_http_request_duration_seconds_count{handler=\"counted\"} "
			       "2\n"));
	CHECK(strstr(out.data, "\nautoprof_http_request_duration_seconds_bucket{handler=\"counted\","
			       "le=\"10\"} 2\n"));
	CHECK(strstr(out.data, "\nautoprof_http_request_duration_seconds_bucket{handler=\"counted\","
			       "le=\"0.005\"} "));
	CHECK(strstr(out.data, "\nautoprof_http_requests_total{handler=\"notfound\",code=\"404\"} 3\n"));
	CHECK(strstr(out.data, "\nautoprof_http_requests_total{handler=\"hello\",code=\"405\"} 1\n"));
	CHECK(strstr(out.data, "\nautoprof_http_requests_total{handler=\"upload\",code=\"413\"} 2\n"));
	CHECK(strstr(out.data, "\nautoprof_http_requests_total{handler=\"bad\",code=\"500\"} 1\n"));
	/* One series per (handler, code): the POST and PUT upload routes share theirs. */
	CHECK(strstr(out.data, "\nautoprof_http_requests_total{handler=\"upload\",code=\"201\"} 2\n"));
	buf__free(&out);

	/* Through the server, with the built-in handler, which counts itself once answered. */
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/metrics", port), 0);
	CHECK_EQ(r.status, 200);
	CHECK_STR(header(&r, "Content-Type", v, sizeof(v)), METRICS_CONTENT_TYPE_TEXT);
	CHECK(strstr(r.body.data, "# TYPE autoprof_http_requests_total counter\n"));
	CHECK(!strstr(r.body.data, "autoprof_http_requests_total{handler=\"metrics\""));
	CHECK(!strstr(r.body.data, "# EOF"));
	if (promtool_clean(r.body.data, msg, sizeof(msg))) {
		FAILF("promtool: %.400s", msg);
		return;
	}
	buf__free(&r.body);
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/metrics", port), 0);
	CHECK(strstr(r.body.data, "\nautoprof_http_requests_total{handler=\"metrics\",code=\"200\"} 1\n"));
	buf__free(&r.body);

	CHECK_EQ(curl(&r, "-H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5' "
			  "http://127.0.0.1:%d/metrics",
		      port),
		 0);
	CHECK_STR(header(&r, "Content-Type", v, sizeof(v)), METRICS_CONTENT_TYPE_OPENMETRICS);
	CHECK(strstr(r.body.data, "# TYPE autoprof_http_requests counter\n"));
	CHECK(r.body.len > 6 && !strcmp(r.body.data + r.body.len - 6, "# EOF\n"));
	buf__free(&r.body);

	CHECK_EQ(curl(&r, "--compressed http://127.0.0.1:%d/metrics", port), 0);
	CHECK_STR(header(&r, "Content-Encoding", v, sizeof(v)), "gzip");
	CHECK(strstr(r.body.data, "# TYPE autoprof_http_requests_total counter\n"));
	buf__free(&r.body);
}

TEST(bad_listen_address)
{
	static const char *const bad[] = {
		"127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:8a", "[::1:80", "::1:80",
		"[127.0.0.1]:80", "[::1]80", "[]:80", "",
	};
	int fds = count_fds();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = 0;
		struct http_server *s = http_server__start(bad[i], routes, NR_ROUTES, NULL, &err);

		if (s) {
			http_server__stop(s);
			FAILF("\"%s\" accepted", bad[i]);
			return;
		}
		if (err != -EINVAL) {
			FAILF("\"%s\": err %d, expected %d", bad[i], err, -EINVAL);
			return;
		}
	}
	/* Not equal: the server may close sockets of earlier clients meanwhile. */
	CHECK(count_fds() <= fds);
}

TEST(address_in_use)
{
	char addr[64];
	int fds = count_fds();
	int err = 0;

	if (!srv)
		SKIP("no server");
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	CHECK(!http_server__start(addr, routes, NR_ROUTES, NULL, &err));
	CHECK_EQ(err, -EADDRINUSE);
	/* Every address includes 127.0.0.1. */
	snprintf(addr, sizeof(addr), ":%d", port);
	err = 0;
	CHECK(!http_server__start(addr, routes, NR_ROUTES, NULL, &err));
	CHECK_EQ(err, -EADDRINUSE);
	/* Not equal: the server may close sockets of earlier clients meanwhile. */
	CHECK(count_fds() <= fds);
}

TEST(ipv6_and_dual_stack)
{
	struct http_server *s;
	struct reply r;
	char addr[64];
	int err = 0, p;

	if (!have_ipv6_loopback())
		SKIP("no IPv6 loopback");
	s = http_server__start("[::1]:0", routes, NR_ROUTES, "v6", &err);
	CHECK(s);
	p = http_server__port(s);
	CHECK_EQ(curl(&r, "-g 'http://[::1]:%d/echo?a=6'", p), 0);
	CHECK_STR(r.body.data, "a=6 h=(null) ctx=v6");
	buf__free(&r.body);
	http_server__stop(s);

	s = http_server__start(":0", routes, NR_ROUTES, "any", &err);
	CHECK(s);
	p = http_server__port(s);
	CHECK_EQ(curl(&r, "-g 'http://[::1]:%d/echo?a=6'", p), 0);
	CHECK_STR(r.body.data, "a=6 h=(null) ctx=any");
	buf__free(&r.body);
	CHECK_EQ(curl(&r, "'http://127.0.0.1:%d/echo?a=4'", p), 0);
	CHECK_STR(r.body.data, "a=4 h=(null) ctx=any");
	buf__free(&r.body);
	/* The IPv4 side of the wildcard is taken too. */
	snprintf(addr, sizeof(addr), "0.0.0.0:%d", p);
	CHECK(!http_server__start(addr, routes, NR_ROUTES, NULL, &err));
	CHECK_EQ(err, -EADDRINUSE);
	http_server__stop(s);
}

static int connect_port(int p)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(p) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct http_server *start_admin(bool admin_api, int *at)
{
	int err = 0;
	struct http_server *s = http_server__start_opts(
		&(struct http_server_opts){ .listen = "127.0.0.1:0", .admin_api = admin_api },
		admin_routes, sizeof(admin_routes) / sizeof(admin_routes[0]), NULL, &err);

	*at = s ? http_server__port(s) : 0;
	return s;
}

TEST(admin_api_off)
{
	struct reply r;
	int at;
	struct http_server *s = start_admin(false, &at);

	CHECK(s);
	CHECK_EQ(curl(&r, "-H 'Content-Type: application/json' -d '{}' http://127.0.0.1:%d/state",
		      at), 0);
	CHECK_EQ(r.status, 403);
	CHECK(strstr(r.body.data, "--web.enable-admin-api"));
	buf__free(&r.body);
	CHECK_EQ(curl(&r, "-X DELETE http://127.0.0.1:%d/state/1", at), 0);
	CHECK_EQ(r.status, 403);
	buf__free(&r.body);
	CHECK_EQ(curl(&r, "http://127.0.0.1:%d/state", at), 0);
	CHECK_EQ(r.status, 200);
	buf__free(&r.body);
	http_server__stop(s);
}

TEST(admin_api_on_same_origin_json_only)
{
	static const struct {
		const char *args;
		int status;
	} cases[] = {
		{ "-H 'Content-Type: application/json' -d '{}'", 201 },
		{ "-H 'Content-Type: application/json; charset=utf-8' -d '{}'", 201 },
		{ "-H 'Content-Type: application/json' -H 'Origin: http://127.0.0.1:%d' -d '{}'", 201 },
		{ "-H 'Content-Type: application/json' -H 'Sec-Fetch-Site: same-origin' -d '{}'", 201 },
		{ "-H 'Content-Type: application/json' -H 'Origin: http://evil.example' -d '{}'", 403 },
		{ "-H 'Content-Type: application/json' -H 'Origin: https://127.0.0.1:%d' -d '{}'", 403 },
		{ "-H 'Content-Type: application/json' -H 'Sec-Fetch-Site: cross-site' -d '{}'", 403 },
		{ "-H 'Content-Type: application/json' -H 'Sec-Fetch-Site: same-site' -d '{}'", 403 },
		{ "-d a=b", 415 },
		{ "-H 'Content-Type: text/plain' -d '{}'", 415 },
		{ "-H 'Content-Type: application/jsonx' -d '{}'", 415 },
		{ "-X POST", 415 },
		{ "-H 'Content-Type: application/json' -H 'Host: evil.example' -d '{}'", 421 },
		{ "-H 'Host: localhost:1' -H 'Content-Type: application/json' -d '{}'", 201 },
	};
	char args[256];
	struct reply r;
	int at;
	struct http_server *s = start_admin(true, &at);

	CHECK(s);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(args, sizeof(args), cases[i].args, at);
		CHECK_EQ(curl(&r, "%s http://127.0.0.1:%d/state", args, at), 0);
		if (r.status != cases[i].status)
			FAILF("%s: HTTP %d, want %d: %s", args, r.status, cases[i].status,
			      r.body.data);
		buf__free(&r.body);
	}
	/* A DELETE without a body needs no Content-Type. */
	CHECK_EQ(curl(&r, "-X DELETE http://127.0.0.1:%d/state/1", at), 0);
	CHECK_EQ(r.status, 200);
	buf__free(&r.body);
	http_server__stop(s);
}

TEST(profile_queries_bounded)
{
	char cmd[512], line[64];
	int at, ok = 0, busy = 0;
	struct http_server *s = start_admin(false, &at);
	FILE *f;

	CHECK(s);
	/* 8 at once against a bound of 4: the ones past it are told to come back. */
	snprintf(cmd, sizeof(cmd),
		 "for i in 1 2 3 4 5 6 7 8; do curl -s -o /dev/null -w '%%{http_code} "
		 "%%header{retry-after}\\n' http://127.0.0.1:%d/profile & done; wait", at);
	f = popen(cmd, "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		ok += !strncmp(line, "200", 3);
		busy += !strcmp(line, "503 1\n");
	}
	pclose(f);
	if (ok + busy != 8 || ok < HTTP_MAX_PROFILE_QUERIES || !busy)
		FAILF("%d answered, %d busy", ok, busy);
	http_server__stop(s);
}

TEST(stop_with_idle_keepalive)
{
	static const char req[] = "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
	char resp[1024];
	size_t got = 0;
	int keep, idle;
	double t0, took;
	struct pollfd pfd;

	if (!srv)
		SKIP("no server");
	keep = connect_port(port);
	CHECK(keep >= 0);
	CHECK_EQ(write(keep, req, sizeof(req) - 1), (long)sizeof(req) - 1);
	/* Read the whole answer so the connection is idle, waiting for a next request. */
	while (!strstr(resp, "hello\n")) {
		ssize_t n;

		pfd = (struct pollfd){ .fd = keep, .events = POLLIN };
		CHECK(poll(&pfd, 1, 3000) == 1);
		n = read(keep, resp + got, sizeof(resp) - 1 - got);
		CHECK(n > 0);
		got += (size_t)n;
		resp[got] = '\0';
	}
	CHECK(!strncmp(resp, "HTTP/1.1 200", 12));
	/* And one that never sends a byte. */
	idle = connect_port(port);
	CHECK(idle >= 0);
	usleep(100 * 1000);

	t0 = now_s();
	http_server__stop(srv);
	took = now_s() - t0;
	srv = NULL;
	if (took >= 1.5) {
		FAILF("stop took %.3f s", took);
		return;
	}
	/* The server closed both connections and its listening socket. */
	pfd = (struct pollfd){ .fd = keep, .events = POLLIN };
	CHECK(poll(&pfd, 1, 1000) == 1);
	CHECK(read(keep, resp, sizeof(resp)) <= 0);
	close(keep);
	close(idle);
	CHECK(connect_port(port) < 0);
	/* Nothing of the server's is left open: listening socket, wakeup channel. */
	CHECK_EQ(count_fds(), fds_before_start);
}

TEST(stopped_server_leaves_no_metrics)
{
	struct buf out = {};

	CHECK_EQ(metrics__render(&out, false), 0);
	CHECK(!strstr(out.data, "autoprof_http"));
	buf__free(&out);
	http_server__stop(NULL);
}

int main(void)
{
	if (getenv("TEST_DEBUG"))
		log__set_level(LOG_DEBUG);
	else
		log__set_level(LOG_ERROR);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(start);
	RUN(get_ok);
	RUN(head_uses_get_route);
	RUN(query_and_header);
	RUN(not_found);
	RUN(method_not_allowed);
	RUN(post_body);
	RUN(post_body_too_large);
	RUN(response_fields);
	RUN(index_lists_routes);
	RUN(request_metrics);
	/* After request_metrics, which counts the 404s before it. */
	RUN(wildcard_segment);
	RUN(bad_listen_address);
	RUN(address_in_use);
	RUN(ipv6_and_dual_stack);
	RUN(admin_api_off);
	RUN(admin_api_on_same_origin_json_only);
	RUN(profile_queries_bounded);
	RUN(stop_with_idle_keepalive);
	RUN(stopped_server_leaves_no_metrics);
	http_server__stop(srv);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return test_summary();
}
