// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "otlp: " fmt

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "export/curl_dl.h"
#include "export/otlp_push.h"
#include "lib/log.h"
#include "lib/timeconst.h"

#define EXPORT_PATH "/v1development/profiles"
#define BACKOFF_MIN_NS (1 * NSEC_PER_SEC)
#define BACKOFF_MAX_NS (30 * NSEC_PER_SEC)
#define RETRY_AFTER_MAX_NS (60 * NSEC_PER_SEC)
/* A Retry-After of 0 from a struggling collector must not turn into a busy loop. */
#define RETRY_AFTER_MIN_NS (100 * NSEC_PER_MSEC)
/* Responses are tiny (an ExportProfilesServiceResponse); anything beyond this is ignored. */
#define RESPONSE_MAX (64 * 1024)

/* One queued request body, owned; the queue is a singly linked FIFO. */
struct batch {
	struct batch *next;
	struct buf data;
	bool gzipped;
};

struct otlp_pusher {
	char *url;
	uint64_t interval_ns;
	uint64_t queue_limit;
	uint64_t shutdown_ns;
	uint64_t timeout_ns;
	bool gzip;
	otlp_collect_fn collect;
	void *ctx;

	const struct curl_dl *lib; /* libcurl, loaded by the first pusher */
	CURL *curl;
	struct curl_slist *hdrs_plain;
	struct curl_slist *hdrs_gzip;
	char curl_err[CURL_ERROR_SIZE];

	pthread_t thread;
	pthread_mutex_t lock;	/* stop, stats */
	pthread_cond_t wake;	/* signalled by free() */
	/* Also read without the lock by the curl progress callback, hence atomic. */
	atomic_bool stop;
	/* Set by free() with a shutdown timeout: the monotonic ns by which the last push ends. */
	_Atomic uint64_t drain_by;
	struct otlp_push_stats stats;

	/* The rest belongs to the sender thread alone. */
	struct batch *head, *tail;
	uint64_t queued_bytes;
	uint64_t queued_batches;
	uint64_t backoff_ns;	/* last exponential step; 0 after a success */
	uint64_t retry_at;	/* monotonic ns before which nothing is sent */
	bool failing;		/* a retryable failure was logged and not yet recovered from */
	long last_rejected;	/* HTTP code of the last logged rejection, 0 after a success */
	uint64_t rng;

	/* Filled by the curl callbacks during one request. */
	struct buf response;
	uint64_t retry_after_ns;
};

/* Told to stop, or draining past the shutdown deadline. */
static bool pusher__stopping(struct otlp_pusher *p)
{
	uint64_t by = atomic_load_explicit(&p->drain_by, memory_order_relaxed);

	return atomic_load_explicit(&p->stop, memory_order_relaxed) || (by && now_ns() >= by);
}

static bool pusher__draining(struct otlp_pusher *p)
{
	return atomic_load_explicit(&p->drain_by, memory_order_relaxed) != 0;
}

/* xorshift64*: jitter only needs to spread out pushers that failed together. */
static uint64_t pusher__random(struct otlp_pusher *p)
{
	p->rng ^= p->rng >> 12;
	p->rng ^= p->rng << 25;
	p->rng ^= p->rng >> 27;
	return p->rng * 2685821657736338717ull;
}

/* ---- minimal protobuf reader ------------------------------------------------------------ */

/*
 * ExportProfilesServiceResponse is decoded by hand rather than with the protobuf-c code
 * generated from profiles_service.proto: we need two fields of one tiny message, and reading
 * them directly keeps this module independent of when and how that generated code is built
 * (and of its allocations). Wire format: https://protobuf.dev/programming-guides/encoding/
 */
struct pb_reader {
	const uint8_t *p, *end;
};

static int pb__varint(struct pb_reader *r, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int shift;

	for (shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (r->p >= r->end)
			return -EBADMSG;
		byte = *r->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -EBADMSG;
}

/* Reads a length-delimited field's extent into sub, advancing r past it. */
static int pb__bytes(struct pb_reader *r, struct pb_reader *sub)
{
	uint64_t len;
	int ret;

	ret = pb__varint(r, &len);
	if (ret)
		return ret;
	if (len > (uint64_t)(r->end - r->p))
		return -EBADMSG;
	sub->p = r->p;
	sub->end = r->p + len;
	r->p += len;
	return 0;
}

static int pb__skip(struct pb_reader *r, unsigned int wire_type)
{
	struct pb_reader sub;
	uint64_t v;

	switch (wire_type) {
	case 0:
		return pb__varint(r, &v);
	case 1:
	case 5: {
		size_t n = wire_type == 1 ? 8 : 4;

		if ((size_t)(r->end - r->p) < n)
			return -EBADMSG;
		r->p += n;
		return 0;
	}
	case 2:
		return pb__bytes(r, &sub);
	default:
		/* Groups (3, 4) are long deprecated and never used by OTLP. */
		return -EBADMSG;
	}
}

/* ExportProfilesPartialSuccess { int64 rejected_profiles = 1; string error_message = 2; } */
static int pb__partial_success(struct pb_reader r, int64_t *rejected, char *msg, size_t msg_size)
{
	while (r.p < r.end) {
		struct pb_reader sub;
		uint64_t key, v;
		int ret;

		ret = pb__varint(&r, &key);
		if (ret)
			return ret;
		if (key == (1 << 3 | 0)) {
			ret = pb__varint(&r, &v);
			if (ret)
				return ret;
			*rejected = (int64_t)v;
		} else if (key == (2 << 3 | 2)) {
			size_t n;

			ret = pb__bytes(&r, &sub);
			if (ret)
				return ret;
			n = (size_t)(sub.end - sub.p);
			if (n >= msg_size)
				n = msg_size - 1;
			memcpy(msg, sub.p, n);
			msg[n] = '\0';
		} else {
			ret = pb__skip(&r, key & 7);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* ExportProfilesServiceResponse { ExportProfilesPartialSuccess partial_success = 1; } */
static int response__decode(const void *data, size_t len, int64_t *rejected, char *msg,
			    size_t msg_size)
{
	struct pb_reader r = { data, (const uint8_t *)data + len };

	*rejected = 0;
	msg[0] = '\0';
	while (r.p < r.end) {
		struct pb_reader sub;
		uint64_t key;
		int ret;

		ret = pb__varint(&r, &key);
		if (ret)
			return ret;
		if (key == (1 << 3 | 2)) {
			ret = pb__bytes(&r, &sub);
			if (ret)
				return ret;
			/* A repeated embedded message merges; last scalar wins, as in protobuf. */
			ret = pb__partial_success(sub, rejected, msg, msg_size);
		} else {
			ret = pb__skip(&r, key & 7);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- queue ------------------------------------------------------------------------------ */

static void batch__free(struct batch *b)
{
	buf__free(&b->data);
	free(b);
}

/* Publishes the queue size (lock held); only the sender thread touches the queue itself. */
static void pusher__publish_queue(struct otlp_pusher *p)
{
	p->stats.queue_bytes = p->queued_bytes;
	p->stats.queue_batches = p->queued_batches;
}

static struct batch *queue__pop(struct otlp_pusher *p)
{
	struct batch *b = p->head;

	p->head = b->next;
	if (!p->head)
		p->tail = NULL;
	p->queued_bytes -= b->data.len;
	p->queued_batches--;
	return b;
}

/* Takes ownership of b. Drops the oldest batches (or b itself) to stay within the bound. */
static void queue__push(struct otlp_pusher *p, struct batch *b)
{
	uint64_t dropped = 0;

	if (b->data.len > p->queue_limit) {
		batch__free(b);
		pthread_mutex_lock(&p->lock);
		p->stats.batches_dropped_queue_full++;
		pthread_mutex_unlock(&p->lock);
		return;
	}
	while (p->head && p->queued_bytes + b->data.len > p->queue_limit) {
		batch__free(queue__pop(p));
		dropped++;
	}
	b->next = NULL;
	if (p->tail)
		p->tail->next = b;
	else
		p->head = b;
	p->tail = b;
	p->queued_bytes += b->data.len;
	p->queued_batches++;

	pthread_mutex_lock(&p->lock);
	p->stats.batches_queued++;
	p->stats.batches_dropped_queue_full += dropped;
	pusher__publish_queue(p);
	pthread_mutex_unlock(&p->lock);
}

static void pusher__collect(struct otlp_pusher *p, uint64_t window_ns)
{
	struct buf out = { 0 };
	struct batch *b;
	int ret;

	ret = p->collect(window_ns, &out, p->ctx);
	if (ret < 0)
		goto count_error;
	/* Nothing to say this window: an empty request would only cost the collector a parse. */
	if (!out.len) {
		buf__free(&out);
		return;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		goto free_out;
	if (p->gzip) {
		ret = buf__gzip(out.data, out.len, &b->data);
		if (ret)
			goto free_batch;
		buf__free(&out);
		b->gzipped = true;
	} else {
		b->data = out;
	}
	queue__push(p, b);
	return;

free_batch:
	batch__free(b);
free_out:
	buf__free(&out);
count_error:
	pthread_mutex_lock(&p->lock);
	p->stats.collect_errors++;
	pthread_mutex_unlock(&p->lock);
}

/* ---- sending ---------------------------------------------------------------------------- */

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	/* Non-zero aborts the transfer, so free() need not wait for a slow collector. */
	return pusher__stopping(ctx);
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct otlp_pusher *p = ctx;
	size_t len = size * n;

	/* Keep reading past the cap (returning less would fail the request) but store nothing. */
	if (p->response.len + len <= RESPONSE_MAX)
		buf__append(&p->response, data, len);
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	static const char name[] = "retry-after:";
	struct otlp_pusher *p = ctx;
	size_t len = size * n;
	unsigned long long secs;
	char value[64];
	size_t i, vlen;
	char *end;

	if (len <= sizeof(name) - 1 || strncasecmp(data, name, sizeof(name) - 1))
		return len;
	i = sizeof(name) - 1;
	while (i < len && (data[i] == ' ' || data[i] == '\t'))
		i++;
	vlen = len - i;
	while (vlen && (data[i + vlen - 1] == '\r' || data[i + vlen - 1] == '\n' ||
			data[i + vlen - 1] == ' '))
		vlen--;
	if (!vlen || vlen >= sizeof(value))
		return len;
	memcpy(value, data + i, vlen);
	value[vlen] = '\0';

	/* Either delay-seconds or an HTTP-date (RFC 9110 10.2.3). */
	errno = 0;
	secs = strtoull(value, &end, 10);
	if (end == value || *end || errno) {
		time_t when = p->lib->getdate(value, NULL);
		time_t now = time(NULL);

		if (when == -1)
			return len;
		secs = when > now ? (unsigned long long)(when - now) : 0;
	}
	if (secs >= RETRY_AFTER_MAX_NS / NSEC_PER_SEC)
		p->retry_after_ns = RETRY_AFTER_MAX_NS;
	else if (secs * NSEC_PER_SEC < RETRY_AFTER_MIN_NS)
		p->retry_after_ns = RETRY_AFTER_MIN_NS;
	else
		p->retry_after_ns = secs * NSEC_PER_SEC;
	return len;
}

/* Schedules the next attempt after a retryable failure. */
static void pusher__back_off(struct otlp_pusher *p)
{
	uint64_t delay;

	p->backoff_ns = p->backoff_ns ? p->backoff_ns * 2 : BACKOFF_MIN_NS;
	if (p->backoff_ns > BACKOFF_MAX_NS)
		p->backoff_ns = BACKOFF_MAX_NS;
	if (p->retry_after_ns) {
		/* The collector knows its own recovery time better than our guess. */
		delay = p->retry_after_ns;
	} else {
		/* +-20 % so that many agents cut off together do not come back in lockstep. */
		delay = p->backoff_ns / 1000 * (800 + pusher__random(p) % 401);
		if (delay > BACKOFF_MAX_NS)
			delay = BACKOFF_MAX_NS;
	}
	p->retry_at = now_ns() + delay;
}

static void pusher__recovered(struct otlp_pusher *p)
{
	if (p->failing)
		pr_warn("collector reachable again\n");
	p->failing = false;
	p->backoff_ns = 0;
	p->retry_at = 0;
}

static void pusher__sent(struct otlp_pusher *p, struct batch *b)
{
	int64_t rejected = 0;
	char msg[256];
	char *type = NULL;

	p->lib->easy_getinfo(p->curl, CURLINFO_CONTENT_TYPE, &type);
	/* A collector may answer in JSON if it ignored our Content-Type; that we cannot read. */
	if (p->response.len && (!type || strstr(type, "protobuf"))) {
		/* A malformed answer must not count what it half-said. */
		if (response__decode(p->response.data, p->response.len, &rejected, msg,
				     sizeof(msg)) ||
		    rejected < 0)
			rejected = 0;
		else if (rejected)
			pr_debug("collector rejected %" PRId64 " profiles: %s\n", rejected, msg);
	}

	pthread_mutex_lock(&p->lock);
	p->stats.batches_sent++;
	p->stats.bytes_sent += b->data.len;
	p->stats.profiles_rejected += (uint64_t)rejected;
	pthread_mutex_unlock(&p->lock);
}

enum send_result {
	SEND_OK,	/* the batch is done with (delivered or rejected): pop it */
	SEND_RETRY,	/* keep it and back off */
	SEND_ABORTED,	/* stopping */
};

static enum send_result pusher__send(struct otlp_pusher *p, struct batch *b)
{
	long status = 0;
	CURLcode res;

	buf__reset(&p->response);
	p->retry_after_ns = 0;
	p->curl_err[0] = '\0';
	if (pusher__draining(p)) {
		uint64_t by = atomic_load_explicit(&p->drain_by, memory_order_relaxed);
		uint64_t now = now_ns();
		uint64_t left = by > now ? by - now : 0;

		/* The last requests end by the deadline, connecting included. */
		if (left < p->timeout_ns)
			p->lib->easy_setopt(p->curl, CURLOPT_TIMEOUT_MS,
					    (long)(left / NSEC_PER_MSEC) + 1);
	}
	p->lib->easy_setopt(p->curl, CURLOPT_HTTPHEADER, b->gzipped ? p->hdrs_gzip : p->hdrs_plain);
	p->lib->easy_setopt(p->curl, CURLOPT_POSTFIELDS, b->data.data);
	p->lib->easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)b->data.len);
	res = p->lib->easy_perform(p->curl);
	if ((res == CURLE_ABORTED_BY_CALLBACK || res == CURLE_OPERATION_TIMEDOUT) &&
	    pusher__stopping(p))
		return SEND_ABORTED;
	if (res != CURLE_OK) {
		pthread_mutex_lock(&p->lock);
		p->stats.failures_network++;
		p->stats.retries++;
		pthread_mutex_unlock(&p->lock);
		if (!p->failing)
			pr_warn("collector unreachable (%s), retrying\n",
				p->curl_err[0] ? p->curl_err : p->lib->easy_strerror(res));
		p->failing = true;
		pusher__back_off(p);
		return SEND_RETRY;
	}
	p->lib->easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300) {
		pusher__recovered(p);
		p->last_rejected = 0;
		pusher__sent(p, b);
		return SEND_OK;
	}

	pthread_mutex_lock(&p->lock);
	p->stats.failures_http++;
	if (status == 429 || status == 502 || status == 503 || status == 504)
		p->stats.retries++;
	else
		p->stats.batches_dropped_rejected++;
	pthread_mutex_unlock(&p->lock);

	if (status == 429 || status == 502 || status == 503 || status == 504) {
		if (!p->failing)
			pr_warn("collector answered HTTP %ld, retrying\n", status);
		p->failing = true;
		pusher__back_off(p);
		return SEND_RETRY;
	}
	/* Retrying a request the collector refused would only be refused again. */
	pusher__recovered(p);
	if (status != p->last_rejected)
		pr_warn("collector rejected a batch with HTTP %ld, dropping it\n", status);
	p->last_rejected = status;
	return SEND_OK;
}

/* Sends queued batches oldest first until the queue is empty or one must be retried. */
static void pusher__flush(struct otlp_pusher *p)
{
	while (p->head && !pusher__stopping(p)) {
		enum send_result r = pusher__send(p, p->head);

		if (r != SEND_OK)
			return;
		batch__free(queue__pop(p));
		pthread_mutex_lock(&p->lock);
		pusher__publish_queue(p);
		pthread_mutex_unlock(&p->lock);
	}
}

/*
 * The last push at shutdown: what was gathered since the last collect, then the queue oldest
 * first, ignoring backoff, each batch tried once, until the deadline.
 */
static void pusher__drain(struct otlp_pusher *p, uint64_t window_ns)
{
	/* A request that was in flight when free() came may have used up the time already. */
	if (!pusher__stopping(p))
		pusher__collect(p, window_ns);
	pusher__flush(p);
	if (p->queued_batches)
		pr_warn("exiting with %" PRIu64 " push(es) not delivered\n", p->queued_batches);
}

static void ns_to_timespec(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts->tv_nsec = (long)(ns % NSEC_PER_SEC);
}

static void *pusher__run(void *arg)
{
	struct otlp_pusher *p = arg;
	uint64_t last_collect = now_ns();
	uint64_t next_collect = last_collect + p->interval_ns;

	for (;;) {
		uint64_t now;

		pthread_mutex_lock(&p->lock);
		while (!pusher__stopping(p) && !pusher__draining(p)) {
			uint64_t deadline = next_collect;
			struct timespec ts;

			if (p->head && p->retry_at < deadline)
				deadline = p->retry_at;
			if (now_ns() >= deadline)
				break;
			ns_to_timespec(deadline, &ts);
			pthread_cond_timedwait(&p->wake, &p->lock, &ts);
		}
		pthread_mutex_unlock(&p->lock);
		if (pusher__stopping(p))
			break;
		if (pusher__draining(p)) {
			pusher__drain(p, now_ns() - last_collect);
			break;
		}

		now = now_ns();
		if (now >= next_collect) {
			/* The real window, which exceeds the interval when a send ran long. */
			pusher__collect(p, now - last_collect);
			last_collect = now;
			next_collect += p->interval_ns;
			/* Ticks missed during a long send are skipped, not bunched up. */
			if (next_collect <= now)
				next_collect = now + p->interval_ns;
		}
		if (now_ns() >= p->retry_at)
			pusher__flush(p);
	}
	return NULL;
}

/* ---- setup ------------------------------------------------------------------------------ */

static bool header_ok(const struct otlp_header *h)
{
	if (!h->name || !*h->name || !h->value)
		return false;
	/* Forbid what would let a config value smuggle in another header or line. */
	if (strpbrk(h->name, ":\r\n \t") || strpbrk(h->value, "\r\n"))
		return false;
	return true;
}

static int headers__build(const struct curl_dl *lib, const struct otlp_push_opts *opts, bool gzip,
			  struct curl_slist **out)
{
	struct curl_slist *list = NULL, *next;
	struct buf line = { 0 };
	int ret = -ENOMEM;
	size_t i;

	next = lib->slist_append(list, "Content-Type: application/x-protobuf");
	if (!next)
		goto free_list;
	list = next;
	/* libcurl would otherwise wait up to a second for "100 Continue" on large bodies. */
	next = lib->slist_append(list, "Expect:");
	if (!next)
		goto free_list;
	list = next;
	if (gzip) {
		next = lib->slist_append(list, "Content-Encoding: gzip");
		if (!next)
			goto free_list;
		list = next;
	}
	for (i = 0; i < opts->nr_headers; i++) {
		const struct otlp_header *h = &opts->headers[i];

		buf__reset(&line);
		/* "Name;" is how libcurl is told to send a header with an empty value. */
		if (*h->value ? buf__printf(&line, "%s: %s", h->name, h->value) :
				buf__printf(&line, "%s;", h->name))
			goto free_list;
		next = lib->slist_append(list, line.data);
		if (!next)
			goto free_list;
		list = next;
	}
	buf__free(&line);
	*out = list;
	return 0;

free_list:
	buf__free(&line);
	lib->slist_free_all(list);
	return ret;
}

static int url__build(const char *endpoint, char **out)
{
	size_t len, scheme;
	struct buf url = { 0 };

	if (!endpoint)
		return -EINVAL;
	if (!strncasecmp(endpoint, "http://", 7))
		scheme = 7;
	else if (!strncasecmp(endpoint, "https://", 8))
		scheme = 8;
	else
		return -EINVAL;
	len = strlen(endpoint);
	while (len > scheme && endpoint[len - 1] == '/')
		len--;
	if (len == scheme || strpbrk(endpoint, " \t\r\n"))
		return -EINVAL;
	if (buf__append(&url, endpoint, len) || buf__puts(&url, EXPORT_PATH)) {
		buf__free(&url);
		return -ENOMEM;
	}
	*out = url.data;
	return 0;
}

static int pusher__setup_curl(struct otlp_pusher *p, const struct otlp_push_opts *opts)
{
	CURL *c;

	c = p->lib->easy_init();
	if (!c)
		return -ENOMEM;
	p->curl = c;
	if (p->lib->easy_setopt(c, CURLOPT_URL, p->url) != CURLE_OK)
		return -EINVAL;
	/* Only the scheme we were configured with; no redirect may take us elsewhere. */
	p->lib->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	p->lib->easy_setopt(c, CURLOPT_POST, 1L);
	/* We are a library thread: libcurl must not install signal handlers or use alarm(). */
	p->lib->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	p->lib->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(opts->timeout_ns / NSEC_PER_MSEC));
	p->lib->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	p->lib->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	p->lib->easy_setopt(c, CURLOPT_XFERINFODATA, p);
	p->lib->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	p->lib->easy_setopt(c, CURLOPT_WRITEDATA, p);
	p->lib->easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	p->lib->easy_setopt(c, CURLOPT_HEADERDATA, p);
	p->lib->easy_setopt(c, CURLOPT_ERRORBUFFER, p->curl_err);
	p->lib->easy_setopt(c, CURLOPT_USERAGENT, "autoprof");
	if (opts->ca_file && *opts->ca_file &&
	    p->lib->easy_setopt(c, CURLOPT_CAINFO, opts->ca_file) != CURLE_OK)
		return -EINVAL;
	if (opts->cert_file && *opts->cert_file &&
	    p->lib->easy_setopt(c, CURLOPT_SSLCERT, opts->cert_file) != CURLE_OK)
		return -EINVAL;
	if (opts->key_file && *opts->key_file &&
	    p->lib->easy_setopt(c, CURLOPT_SSLKEY, opts->key_file) != CURLE_OK)
		return -EINVAL;
	return 0;
}

static void pusher__destroy(struct otlp_pusher *p)
{
	while (p->head)
		batch__free(queue__pop(p));
	if (p->curl)
		p->lib->easy_cleanup(p->curl);
	p->lib->slist_free_all(p->hdrs_plain);
	p->lib->slist_free_all(p->hdrs_gzip);
	buf__free(&p->response);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->url);
	free(p);
}

struct otlp_pusher *otlp_pusher__new(const struct otlp_push_opts *opts, otlp_collect_fn collect,
				     void *ctx, int *err)
{
	const struct curl_dl *lib;
	pthread_condattr_t attr;
	struct otlp_pusher *p;
	sigset_t all, old;
	size_t i;
	int ret;

	if (!opts || !collect || !opts->interval_ns || (opts->nr_headers && !opts->headers)) {
		ret = -EINVAL;
		goto fail;
	}
	for (i = 0; i < opts->nr_headers; i++) {
		if (!header_ok(&opts->headers[i])) {
			ret = -EINVAL;
			goto fail;
		}
	}
	ret = curl_dl__get(&lib);
	if (ret)
		goto fail;

	p = calloc(1, sizeof(*p));
	if (!p) {
		ret = -ENOMEM;
		goto fail;
	}
	p->lib = lib;
	pthread_mutex_init(&p->lock, NULL);
	/* A monotonic clock so that a wall clock step neither stalls nor floods the sender. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &attr);
	pthread_condattr_destroy(&attr);
	atomic_init(&p->stop, false);
	atomic_init(&p->drain_by, 0);
	p->interval_ns = opts->interval_ns;
	p->timeout_ns = opts->timeout_ns;
	p->shutdown_ns = opts->shutdown_timeout_ns;
	p->queue_limit = opts->queue_bytes;
	p->gzip = opts->gzip;
	p->collect = collect;
	p->ctx = ctx;
	p->rng = now_ns() ^ (uint64_t)(uintptr_t)p;
	if (!p->rng)
		p->rng = 1;

	ret = url__build(opts->endpoint, &p->url);
	if (ret)
		goto destroy;
	ret = headers__build(p->lib, opts, false, &p->hdrs_plain);
	if (ret)
		goto destroy;
	ret = headers__build(p->lib, opts, true, &p->hdrs_gzip);
	if (ret)
		goto destroy;
	ret = pusher__setup_curl(p, opts);
	if (ret)
		goto destroy;

	/* Signals are for the main thread; the sender must not take SIGINT/SIGTERM from it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&p->thread, NULL, pusher__run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto destroy;
	pthread_setname_np(p->thread, "otlp-push");
	return p;

destroy:
	pusher__destroy(p);
fail:
	*err = ret;
	return NULL;
}

void otlp_pusher__free(struct otlp_pusher *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->shutdown_ns)
		atomic_store_explicit(&p->drain_by, now_ns() + p->shutdown_ns,
				      memory_order_relaxed);
	else
		atomic_store_explicit(&p->stop, true, memory_order_relaxed);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	/* What is still queued is lost: waiting longer for a collector would delay the exit. */
	pusher__destroy(p);
}

void otlp_pusher__stats(struct otlp_pusher *p, struct otlp_push_stats *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->stats;
	pthread_mutex_unlock(&p->lock);
}
