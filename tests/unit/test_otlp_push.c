/* DEPS: src/export/otlp_push.c src/export/curl_dl.c src/export/otlp_headers.c src/http/server.c src/http/listen.c src/http/webconfig.c src/lib/metrics.c src/lib/buf.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "export/otlp_headers.h"
#include "export/otlp_push.h"
#include "http/http.h"
#include "lib/log.h"
#include "lib/timeconst.h"
#include "testlib.h"

#define MAX_REQS 256
#define PAYLOAD_LEN 100

/* ---- fake collector on autoprof's own HTTP server --------------------------------------- */

struct req {
	char *body;	/* decoded (gunzipped when sent with Content-Encoding: gzip) */
	size_t len;
	char encoding[32];
	char content_type[64];
	char custom[64];
	int status;	/* what we answered */
	uint64_t at_ns;
};

struct collector {
	pthread_mutex_t lock;
	struct req reqs[MAX_REQS];
	int nr;
	int script[16];		/* statuses for the first requests; 200 after */
	int nr_script;
	bool partial;		/* 200 answers carry partial_success.rejected_profiles = 2 */
	atomic_bool hang;	/* handler sleeps up to 5 s ... */
	atomic_bool hanging;	/* ... says it is in there ... */
	atomic_bool release;	/* ... and leaves early when told */
};

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int gunzip(const char *in, size_t len, char **out, size_t *out_len)
{
	size_t cap = len * 8 + 1024;
	z_stream zs = { 0 };
	char *o = malloc(cap);
	int ret;

	if (!o || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		free(o);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)o;
	zs.avail_out = (uInt)(cap - 1);
	ret = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(o);
		return -EIO;
	}
	o[zs.total_out] = '\0';
	*out = o;
	*out_len = zs.total_out;
	return 0;
}

static void copy_header(const struct http_request *req, const char *name, char *dst, size_t size)
{
	const char *v = http__header(req, name);

	snprintf(dst, size, "%s", v ? v : "");
}

static void on_export(const struct http_request *req, struct http_response *resp, void *ctx)
{
	/*
	 * ExportProfilesServiceResponse { partial_success (1) { rejected_profiles (1) = 2,
	 * error_message (2) = "bar" } } preceded by an unknown varint field 7 = 1 to be skipped.
	 */
	static const char partial[] = { 0x38, 0x01, 0x0a, 0x07, 0x08, 0x02,
					0x12, 0x03, 'b', 'a', 'r' };
	struct collector *c = ctx;
	const char *body;
	struct req *r;
	size_t len;

	if (atomic_load(&c->hang)) {
		atomic_store(&c->hanging, true);
		for (int i = 0; i < 100 && !atomic_load(&c->release); i++)
			sleep_ms(50);
	}
	body = http__body(req, &len);
	pthread_mutex_lock(&c->lock);
	if (c->nr >= MAX_REQS) {
		pthread_mutex_unlock(&c->lock);
		resp->status = 500;
		return;
	}
	r = &c->reqs[c->nr];
	copy_header(req, "Content-Encoding", r->encoding, sizeof(r->encoding));
	copy_header(req, "Content-Type", r->content_type, sizeof(r->content_type));
	copy_header(req, "X-Scope-OrgID", r->custom, sizeof(r->custom));
	if (!strcmp(r->encoding, "gzip")) {
		if (gunzip(body, len, &r->body, &r->len)) {
			r->body = strdup("(bad gzip)");
			r->len = strlen(r->body);
		}
	} else {
		r->body = malloc(len + 1);
		memcpy(r->body, body, len + 1);
		r->len = len;
	}
	r->status = c->nr < c->nr_script ? c->script[c->nr] : 200;
	r->at_ns = now_ns();
	c->nr++;
	resp->status = r->status;
	resp->content_type = "application/x-protobuf";
	if (r->status == 200 && c->partial)
		buf__append(&resp->body, partial, sizeof(partial));
	pthread_mutex_unlock(&c->lock);
}

static const struct http_route routes[] = {
	{ "POST", "/v1development/profiles", "export", NULL, .fn = on_export },
};

static void collector__init(struct collector *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
}

static void collector__fini(struct collector *c)
{
	for (int i = 0; i < c->nr; i++)
		free(c->reqs[i].body);
	pthread_mutex_destroy(&c->lock);
}

static int collector__count(struct collector *c)
{
	int n;

	pthread_mutex_lock(&c->lock);
	n = c->nr;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* Polls until the collector has seen n requests; false after timeout_ms. */
static bool collector__wait(struct collector *c, int n, unsigned int timeout_ms)
{
	for (unsigned int waited = 0; waited < timeout_ms; waited += 10) {
		if (collector__count(c) >= n)
			return true;
		sleep_ms(10);
	}
	return collector__count(c) >= n;
}

/* The sequence number of a payload made by produce(), or -1. */
static int seq_of(const struct req *r)
{
	int n;

	if (r->len != PAYLOAD_LEN || sscanf(r->body, "payload-%d", &n) != 1)
		return -1;
	return n;
}

static struct http_server *serve(const char *listen, struct collector *c, int *port)
{
	struct http_server *srv;
	int err = 0;

	srv = http_server__start(listen, routes, 1, c, &err);
	if (srv)
		*port = http_server__port(srv);
	return srv;
}

/* ---- producer --------------------------------------------------------------------------- */

struct producer {
	atomic_int next;
	atomic_int fail_next;	/* make the next collect fail */
};

/* Fixed-size payloads, so that queue arithmetic in the tests is exact. */
static int produce(uint64_t window_ns, struct buf *out, void *ctx)
{
	struct producer *pr = ctx;
	char tmp[PAYLOAD_LEN + 1];

	(void)window_ns;
	if (atomic_exchange(&pr->fail_next, 0))
		return -EIO;
	snprintf(tmp, sizeof(tmp), "payload-%06d", atomic_fetch_add(&pr->next, 1));
	memset(tmp + strlen(tmp), '.', PAYLOAD_LEN - strlen(tmp));
	return buf__append(out, tmp, PAYLOAD_LEN);
}

static struct otlp_push_opts opts_for(const char *endpoint)
{
	struct otlp_push_opts o = {
		.endpoint = endpoint,
		.interval_ns = 100000000ull,
		.timeout_ns = 2000000000ull,
		.queue_bytes = 1 << 20,
	};

	return o;
}

static bool is_in_order(struct collector *c, int n)
{
	for (int i = 0; i < n; i++)
		if (seq_of(&c->reqs[i]) != i)
			return false;
	return true;
}

/* A port on which, for now, nothing listens. */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd, port;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		close(fd);
		return -errno;
	}
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* ---- tests ------------------------------------------------------------------------------ */

TEST(bad_endpoint)
{
	static const char *const bad[] = { "ftp://x:4318", "collector:4318", "", "http://",
					   "http:///" };
	struct producer pr = { 0 };
	struct otlp_push_opts o;
	int err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = 0;
		o = opts_for(bad[i]);
		CHECK(!otlp_pusher__new(&o, produce, &pr, &err));
		CHECK_EQ(err, -EINVAL);
	}
	err = 0;
	o = opts_for(NULL);
	CHECK(!otlp_pusher__new(&o, produce, &pr, &err));
	CHECK_EQ(err, -EINVAL);
	otlp_pusher__free(NULL);
}

TEST(delivers_in_order_with_headers)
{
	static const struct otlp_header hdrs[] = { { "X-Scope-OrgID", "tenant-a" } };
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	char url[64];
	int port, err = 0, n;
	bool ok;

	collector__init(&c);
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	/* The trailing slash must not turn into "//v1development". */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	o = opts_for(url);
	o.headers = hdrs;
	o.nr_headers = 1;
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (!p)
		http_server__stop(srv);
	CHECK(p);
	ok = collector__wait(&c, 5, 5000);
	/* A request is counted sent once its answer is read, after the collector saw it. */
	for (unsigned int waited = 0; waited < 5000; waited += 10) {
		otlp_pusher__stats(p, &st);
		if (st.batches_sent >= 5)
			break;
		sleep_ms(10);
	}
	otlp_pusher__free(p);
	http_server__stop(srv);
	n = c.nr;

	if (!ok) {
		collector__fini(&c);
		FAILF("only %d requests arrived", n);
		return;
	}
	ok = is_in_order(&c, n);
	for (int i = 0; i < n && ok; i++)
		ok = !strcmp(c.reqs[i].content_type, "application/x-protobuf") &&
		     !c.reqs[i].encoding[0] && !strcmp(c.reqs[i].custom, "tenant-a");
	collector__fini(&c);
	CHECK(ok);
	CHECK(st.batches_sent >= 5);
	CHECK_EQ(st.bytes_sent, st.batches_sent * PAYLOAD_LEN);
	CHECK_EQ(st.failures_network + st.failures_http + st.retries, 0);
	CHECK_EQ(st.batches_dropped_queue_full + st.batches_dropped_rejected, 0);
}

TEST(gzip)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	char url[64];
	int port, err = 0;
	bool ok;

	collector__init(&c);
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	o.gzip = true;
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (!p)
		http_server__stop(srv);
	CHECK(p);
	ok = collector__wait(&c, 3, 5000);
	otlp_pusher__stats(p, &st);
	otlp_pusher__free(p);
	http_server__stop(srv);
	ok = ok && is_in_order(&c, c.nr);
	for (int i = 0; i < c.nr && ok; i++)
		ok = !strcmp(c.reqs[i].encoding, "gzip");
	collector__fini(&c);
	CHECK(ok);
	/* On the wire: the compressed size, which differs from the payload's. */
	CHECK(st.bytes_sent > 0 && st.bytes_sent != st.batches_sent * PAYLOAD_LEN);
}

TEST(retries_503_without_loss)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	uint64_t gap;
	char url[64];
	int port, err = 0, n;
	bool ok;

	collector__init(&c);
	c.script[0] = 503;
	c.nr_script = 1;
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (!p)
		http_server__stop(srv);
	CHECK(p);
	/* 503 at ~0.1 s, then a backoff of 1 s +-20 % during which ~10 more batches queue. */
	ok = collector__wait(&c, 6, 5000);
	otlp_pusher__stats(p, &st);
	otlp_pusher__free(p);
	http_server__stop(srv);
	n = c.nr;
	gap = n > 1 ? c.reqs[1].at_ns - c.reqs[0].at_ns : 0;
	/* The first batch is refused and sent again, then the rest follow in order. */
	ok = ok && seq_of(&c.reqs[0]) == 0 && c.reqs[0].status == 503;
	for (int i = 1; i < n && ok; i++)
		ok = seq_of(&c.reqs[i]) == i - 1 && c.reqs[i].status == 200;
	collector__fini(&c);
	CHECK(ok);
	CHECK(gap >= 750000000ull && gap <= 1500000000ull);
	CHECK_EQ(st.retries, 1);
	CHECK_EQ(st.failures_http, 1);
	CHECK_EQ(st.failures_network, 0);
	CHECK_EQ(st.batches_dropped_queue_full + st.batches_dropped_rejected, 0);
	/* The burst after the backoff drained what queued meanwhile. */
	CHECK(st.batches_sent >= 5);
}

TEST(rejected_400_dropped)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	char url[64];
	int port, err = 0, n;
	bool ok;

	collector__init(&c);
	c.script[0] = 400;
	c.nr_script = 1;
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (!p)
		http_server__stop(srv);
	CHECK(p);
	ok = collector__wait(&c, 3, 5000);
	otlp_pusher__stats(p, &st);
	otlp_pusher__free(p);
	http_server__stop(srv);
	n = c.nr;
	/* Not sent again: the next request carries the next batch. */
	ok = ok && is_in_order(&c, n) && c.reqs[0].status == 400;
	collector__fini(&c);
	CHECK(ok);
	CHECK_EQ(st.batches_dropped_rejected, 1);
	CHECK_EQ(st.failures_http, 1);
	CHECK_EQ(st.retries, 0);
	CHECK(st.batches_sent >= 2);
}

TEST(partial_success_counted)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_push_stats st = { 0 };
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	char url[64];
	int port, err = 0;

	collector__init(&c);
	c.partial = true;
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (!p)
		http_server__stop(srv);
	CHECK(p);
	/* Sent and rejected counts move together under one lock: any snapshot is consistent. */
	for (int i = 0; i < 500 && st.batches_sent < 3; i++) {
		sleep_ms(10);
		otlp_pusher__stats(p, &st);
	}
	otlp_pusher__free(p);
	http_server__stop(srv);
	collector__fini(&c);
	CHECK(st.batches_sent >= 3);
	CHECK_EQ(st.profiles_rejected, 2 * st.batches_sent);
	CHECK_EQ(st.batches_dropped_rejected + st.failures_http, 0);
}

/* ---- a raw collector, for what the HTTP server cannot say (a Retry-After header) ------- */

struct raw_collector {
	int fd;
	int nr;
	int seqs[8];
	uint64_t at_ns[8];
};

/* Reads one request (headers, then Content-Length bytes) and returns its payload number. */
static int raw__read_request(int fd)
{
	char buf[8192];
	size_t len = 0, want = 0;
	char *eoh = NULL, *cl;
	ssize_t n;
	int seq = -1;

	for (;;) {
		n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		if (!eoh) {
			eoh = strstr(buf, "\r\n\r\n");
			if (!eoh)
				continue;
			cl = strcasestr(buf, "\r\nContent-Length:");
			if (!cl)
				return -1;
			want = (size_t)(eoh + 4 - buf) + strtoul(cl + 17, NULL, 10);
		}
		if (len >= want)
			break;
	}
	sscanf(eoh + 4, "payload-%d", &seq);
	return seq;
}

static void *raw__serve(void *arg)
{
	static const char busy[] = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\n"
				   "Content-Length: 0\r\nConnection: close\r\n\r\n";
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
				 "Connection: close\r\n\r\n";
	struct raw_collector *rc = arg;

	while (rc->nr < 2) {
		int fd = accept(rc->fd, NULL, NULL);

		if (fd < 0)
			return NULL;
		rc->seqs[rc->nr] = raw__read_request(fd);
		rc->at_ns[rc->nr] = now_ns();
		if (rc->nr == 0)
			send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL);
		else
			send(fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL);
		rc->nr++;
		close(fd);
	}
	return NULL;
}

TEST(retry_after_429)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct raw_collector rc = { .fd = -1 };
	socklen_t salen = sizeof(sa);
	struct producer pr = { 0 };
	struct otlp_push_stats st = { 0 };
	struct otlp_pusher *p;
	struct otlp_push_opts o;
	pthread_t thread;
	uint64_t gap;
	char url[64];
	int err = 0;

	rc.fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(rc.fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(rc.fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(rc.fd, 8) ||
	    getsockname(rc.fd, (struct sockaddr *)&sa, &salen) ||
	    pthread_create(&thread, NULL, raw__serve, &rc)) {
		close(rc.fd);
		FAILF("raw collector: %s", strerror(errno));
		return;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	o = opts_for(url);
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (p) {
		for (int i = 0; i < 500 && !st.batches_sent; i++) {
			sleep_ms(10);
			otlp_pusher__stats(p, &st);
		}
		otlp_pusher__free(p);
	}
	/* Unblocks accept() if the pusher never came twice. */
	shutdown(rc.fd, SHUT_RDWR);
	pthread_join(thread, NULL);
	close(rc.fd);
	CHECK(p);
	CHECK_EQ(rc.nr, 2);
	CHECK_EQ(rc.seqs[0], 0);
	CHECK_EQ(rc.seqs[1], 0);
	/* Retry-After: 2 wins over the first backoff step (1 s +-20 %). */
	gap = rc.at_ns[1] - rc.at_ns[0];
	CHECK(gap >= 1900000000ull && gap <= 2600000000ull);
	CHECK_EQ(st.retries, 1);
	CHECK_EQ(st.failures_http, 1);
	CHECK_EQ(st.batches_sent, 1);
}

TEST(collector_down_then_up)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_push_stats st = { 0 };
	struct http_server *srv = NULL;
	struct otlp_pusher *p;
	struct otlp_push_opts o;
	uint64_t max_queue = 0;
	char url[64], listen[32];
	int port, err = 0, first = -1, n;
	bool ok = true;

	port = free_port();
	CHECK(port > 0);
	collector__init(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	o.interval_ns = 50000000ull;
	o.queue_bytes = 5 * PAYLOAD_LEN + PAYLOAD_LEN / 2;	/* room for 5 */
	p = otlp_pusher__new(&o, produce, &pr, &err);
	CHECK(p);
	/* Down for 1.2 s: ~24 batches made, at most 5 kept. */
	for (int i = 0; i < 120; i++) {
		sleep_ms(10);
		otlp_pusher__stats(p, &st);
		if (st.queue_bytes > max_queue)
			max_queue = st.queue_bytes;
	}
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	srv = serve(listen, &c, &port);
	/* The next retry comes at most ~2.4 s after the second failure. */
	ok = srv && collector__wait(&c, 6, 4000);
	otlp_pusher__stats(p, &st);
	otlp_pusher__free(p);
	http_server__stop(srv);
	n = c.nr;
	if (n)
		first = seq_of(&c.reqs[0]);
	/* Oldest remaining first, then everything after it without a gap. */
	for (int i = 0; i < n && ok; i++)
		ok = seq_of(&c.reqs[i]) == first + i;
	collector__fini(&c);
	CHECK(srv);
	CHECK(ok);
	CHECK(max_queue <= o.queue_bytes);
	CHECK(max_queue >= 4 * PAYLOAD_LEN);
	CHECK(st.failures_network >= 1);
	CHECK_EQ(st.retries, st.failures_network);
	CHECK(st.batches_dropped_queue_full >= 10);
	/* Every batch before the first one delivered was dropped, and only those. */
	CHECK_EQ(first, st.batches_dropped_queue_full);
	CHECK_EQ(st.batches_dropped_rejected, 0);
}

TEST(free_during_backoff)
{
	struct producer pr = { 0 };
	struct otlp_push_stats st = { 0 };
	struct otlp_pusher *p;
	struct otlp_push_opts o;
	char url[64];
	int port, err = 0;
	uint64_t t0, took;

	port = free_port();
	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	p = otlp_pusher__new(&o, produce, &pr, &err);
	CHECK(p);
	for (int i = 0; i < 500 && !st.failures_network; i++) {
		sleep_ms(10);
		otlp_pusher__stats(p, &st);
	}
	/* Now in a backoff of ~1 s. */
	t0 = now_ns();
	otlp_pusher__free(p);
	took = now_ns() - t0;
	CHECK(st.failures_network >= 1);
	CHECK(took < 300000000ull);
}

TEST(free_while_idle)
{
	struct producer pr = { 0 };
	struct otlp_pusher *p;
	struct otlp_push_opts o;
	uint64_t t0, took;
	int err = 0;

	/* Nothing is due for 10 s: only the condition variable can end the wait early. */
	o = opts_for("http://127.0.0.1:1");
	o.interval_ns = 10000000000ull;
	p = otlp_pusher__new(&o, produce, &pr, &err);
	CHECK(p);
	sleep_ms(50);
	t0 = now_ns();
	otlp_pusher__free(p);
	took = now_ns() - t0;
	CHECK(took < 200000000ull);
	CHECK_EQ(atomic_load(&pr.next), 0);
}

TEST(free_during_hanging_request)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	uint64_t t0, took = 0;
	char url[64];
	int port, err = 0;
	bool hung = false;

	collector__init(&c);
	atomic_store(&c.hang, true);
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	o.timeout_ns = 10000000000ull;
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (p) {
		for (int i = 0; i < 300 && !hung; i++) {
			sleep_ms(10);
			hung = atomic_load(&c.hanging);
		}
		t0 = now_ns();
		otlp_pusher__free(p);
		took = now_ns() - t0;
	}
	atomic_store(&c.release, true);
	http_server__stop(srv);
	collector__fini(&c);
	CHECK(p);
	CHECK(hung);
	if (getenv("OTLP_TEST_VERBOSE"))
		fprintf(stderr, "free during a hanging request took %" PRIu64 " ms\n",
			took / 1000000);
	CHECK(took < 1200000000ull);
}

TEST(collect_errors_counted)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_push_stats st = { 0 };
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	char url[64];
	int port, err = 0;

	collector__init(&c);
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	o.interval_ns = 50000000ull;
	/* Too big for the queue on its own: dropped, never sent. */
	o.queue_bytes = PAYLOAD_LEN - 1;
	atomic_store(&pr.fail_next, 1);
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (!p)
		http_server__stop(srv);
	CHECK(p);
	for (int i = 0; i < 300 && st.batches_dropped_queue_full < 2; i++) {
		sleep_ms(10);
		otlp_pusher__stats(p, &st);
	}
	otlp_pusher__free(p);
	http_server__stop(srv);
	CHECK_EQ(c.nr, 0);
	collector__fini(&c);
	CHECK_EQ(st.collect_errors, 1);
	CHECK(st.batches_dropped_queue_full >= 2);
	CHECK_EQ(st.batches_queued + st.batches_sent + st.queue_bytes, 0);
}

TEST(headers_file)
{
	static const char *const bad[] = { "X-Scope-OrgID tenant\n", ": x\n", "A B: c\n",
					   "X: a\x01b\n" };
	char path[] = "/tmp/otlp-headers-XXXXXX", why[256] = "";
	struct otlp_header *hdrs = NULL;
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_pusher *p = NULL;
	struct http_server *srv;
	struct otlp_push_opts o;
	char url[64], *text = NULL;
	int port, err = 0, fd;
	size_t nr = 0;
	FILE *f;

	fd = mkstemp(path);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# tenant\n\nX-Scope-OrgID:  tenant-f \r\nAuthorization: Bearer a=b,c\n", f);
	fclose(f);
	CHECK_EQ(otlp_headers__read_file(path, &text, &hdrs, &nr, why, sizeof(why)), 0);
	CHECK_EQ(nr, 2);
	CHECK_STR(hdrs[0].name, "X-Scope-OrgID");
	CHECK_STR(hdrs[0].value, "tenant-f");
	CHECK_STR(hdrs[1].value, "Bearer a=b,c");

	collector__init(&c);
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	o.headers = hdrs;
	o.nr_headers = nr;
	p = otlp_pusher__new(&o, produce, &pr, &err);
	CHECK(p);
	CHECK(collector__wait(&c, 1, 3000));
	otlp_pusher__free(p);
	http_server__stop(srv);
	CHECK_STR(c.reqs[0].custom, "tenant-f");
	collector__fini(&c);
	free(hdrs);
	free(text);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = fopen(path, "w");
		fputs(bad[i], f);
		fclose(f);
		why[0] = '\0';
		CHECK_EQ(otlp_headers__read_file(path, &text, &hdrs, &nr, why, sizeof(why)),
			 -EINVAL);
		CHECK(strstr(why, "line 1"));
	}
	/* Past the size cap: refused, not read without end. */
	f = fopen(path, "w");
	for (int i = 0; i < OTLP_HEADERS_FILE_MAX / 10 + 1; i++)
		fputs("# padding\n", f);
	fclose(f);
	CHECK_EQ(otlp_headers__read_file(path, &text, &hdrs, &nr, why, sizeof(why)), -EFBIG);
	unlink(path);
	CHECK_EQ(otlp_headers__read_file(path, &text, &hdrs, &nr, why, sizeof(why)), -ENOENT);
}

/* With a shutdown timeout, free() collects once more and delivers it. */
TEST(shutdown_flushes_last_batch)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	char url[64];
	int port, err = 0;

	collector__init(&c);
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	/* Nothing due before free(): what arrives is the shutdown's push alone. */
	o.interval_ns = 10000000000ull;
	o.shutdown_timeout_ns = 2000000000ull;
	p = otlp_pusher__new(&o, produce, &pr, &err);
	CHECK(p);
	sleep_ms(50);
	otlp_pusher__free(p);
	http_server__stop(srv);
	CHECK_EQ(atomic_load(&pr.next), 1);
	CHECK_EQ(c.nr, 1);
	CHECK_EQ(seq_of(&c.reqs[0]), 0);
	collector__fini(&c);
}

/* A collector that is down or hangs holds free() no longer than the shutdown timeout. */
TEST(shutdown_bounded)
{
	struct collector c;
	struct producer pr = { 0 };
	struct otlp_pusher *p;
	struct http_server *srv;
	struct otlp_push_opts o;
	uint64_t t0, took_down = 0, took_hung = 0;
	char url[64];
	int port, err = 0;

	port = free_port();
	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	o.interval_ns = 10000000000ull;
	o.shutdown_timeout_ns = 700000000ull;
	p = otlp_pusher__new(&o, produce, &pr, &err);
	CHECK(p);
	t0 = now_ns();
	otlp_pusher__free(p);
	took_down = now_ns() - t0;
	CHECK_EQ(atomic_load(&pr.next), 1);

	collector__init(&c);
	atomic_store(&c.hang, true);
	srv = serve("127.0.0.1:0", &c, &port);
	CHECK(srv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = opts_for(url);
	o.interval_ns = 10000000000ull;
	o.timeout_ns = 10000000000ull;
	o.shutdown_timeout_ns = 700000000ull;
	p = otlp_pusher__new(&o, produce, &pr, &err);
	if (p) {
		t0 = now_ns();
		otlp_pusher__free(p);
		took_hung = now_ns() - t0;
	}
	atomic_store(&c.release, true);
	http_server__stop(srv);
	collector__fini(&c);
	CHECK(p);
	if (getenv("OTLP_TEST_VERBOSE"))
		fprintf(stderr, "shutdown took %" PRIu64 " ms (down), %" PRIu64 " ms (hung)\n",
			took_down / 1000000, took_hung / 1000000);
	CHECK(took_down < 700000000ull);
	/* The hung request was made and held until the deadline, not beyond. */
	CHECK(took_hung >= 600000000ull);
	CHECK(took_hung < 1000000000ull);
}

int main(void)
{
	/* The pusher's state-change warnings are noise here; OTLP_TEST_VERBOSE shows them. */
	log__set_level(getenv("OTLP_TEST_VERBOSE") ? LOG_WARN : LOG_ERROR);
	RUN(bad_endpoint);
	RUN(delivers_in_order_with_headers);
	RUN(gzip);
	RUN(retries_503_without_loss);
	RUN(rejected_400_dropped);
	RUN(partial_success_counted);
	RUN(retry_after_429);
	RUN(collector_down_then_up);
	RUN(free_during_backoff);
	RUN(free_while_idle);
	RUN(free_during_hanging_request);
	RUN(collect_errors_counted);
	RUN(headers_file);
	RUN(shutdown_flushes_last_batch);
	RUN(shutdown_bounded);
	return test_summary();
}
