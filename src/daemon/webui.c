// SPDX-License-Identifier: GPL-2.0-only
/* The live web view: its embedded page and the JSON it reads besides the pprof endpoints. */
#define pr_fmt(fmt) "webui: " fmt

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "daemon/params.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/timeconst.h"
#include "store/profiles.h"
#include "query/query.h"
#include "store/store.h"
#include "daemon/webui.h"

#define DEFAULT_SECONDS 30

/* webui_page.S: the page's bytes, empty when it was not built. */
extern const char webui_page_start[];
extern const uint64_t webui_page_size;

static const char not_built[] =
	"<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>autoprof</title></head>\n"
	"<body>\n<h1>autoprof</h1>\n<p>The web view was not built into this binary: it is bundled "
	"with npm at build time (<code>make WEBUI=1</code>; see the README).</p>\n"
	"<p>The endpoints are listed at <a href=\"/debug/\">/debug/</a>.</p>\n</body>\n</html>\n";

bool webui__wanted(const struct http_request *req)
{
	const char *accept = http__header(req, "Accept");

	return accept && strcasestr(accept, "text/html");
}

bool webui__built(void)
{
	return webui_page_size;
}

void webui__page(const struct http_request *req, struct http_response *resp)
{
	const char *encoding = http__header(req, "Accept-Encoding");
	size_t len = (size_t)webui_page_size;
	int err;

	resp->content_type = "text/html; charset=utf-8";
	if (!len) {
		err = buf__puts(&resp->body, not_built);
		goto out;
	}
	/* About 100 KiB; compressing it per request costs a few ms, far less than sending it. */
	if (encoding && strcasestr(encoding, "gzip") &&
	    !buf__gzip(webui_page_start, len, &resp->body)) {
		resp->content_encoding = "gzip";
		return;
	}
	buf__reset(&resp->body);
	err = buf__append(&resp->body, webui_page_start, len);
out:
	if (err)
		http__error(resp, 500, "out of memory");
}

/* The collector a profile type needs, so the page can leave out those not running. */
static bool profile_available(const struct daemon *d, enum profile_type type)
{
	switch (type) {
	case PROFILE_CPU:
		return d->oncpu;
	case PROFILE_OFFCPU:
		return d->offcpu;
	case PROFILE_GPUALLOCS:
	case PROFILE_GPUHEAP:
		return d->gpumem;
	default:
		return d->memory;
	}
}

/* The sample type the folded format counts (profiles.h: default_value, else the first). */
static const struct value_type *folded_value(const struct profile_desc *desc)
{
	return &desc->values[desc->default_value < 0 ? 0 : desc->default_value];
}

void webui__profiles(const struct http_request *req, struct http_response *resp, void *ctx)
{
	const struct daemon *d = ctx;
	json_t *list = json_array();
	int err = 0;

	(void)req;
	for (unsigned int i = 0; !err && i < PROFILE__MAX; i++) {
		const struct profile_desc *desc = profile__desc(i);
		const struct value_type *v = folded_value(desc);

		err = json_array_append_new(
			list, json_pack("{s:o,s:o,s:o,s:o,s:o,s:b,s:b}", "name", json__str(desc->name),
					"path", json__str(desc->path), "help", json__str(desc->help),
					"value_type", json__str(v->type), "unit", json__str(v->unit),
					"windowed", query__windowed(desc->type), "available",
					profile_available(d, desc->type)));
	}
	if (err) {
		json_decref(list);
		list = NULL;
	}
	/* The retention bounds every window the page may ask for. */
	err = json__writeln(&resp->body,
			    json_pack("{s:o,s:o}", "retention_s",
				      json__u64(store__retention_ns(d->ctx.store) / NSEC_PER_SEC),
				      "profiles", list),
			    JSON_COMPACT);
	resp->content_type = "application/json";
	if (err)
		http__error(resp, 500, "out of memory");
}

struct proc_sum {
	uint32_t pid;
	bool main_thread; /* comm is the main thread's name */
	const char *comm;
	const char *exe;
	uint64_t samples;
	uint64_t value;
};

static int by_pid(const void *a, const void *b)
{
	const struct proc_sum *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int by_samples_desc(const void *a, const void *b)
{
	const struct proc_sum *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return by_pid(a, b);
}

/* One entry per process of res, most samples first; *nr entries. NULL when out of memory. */
static struct proc_sum *sum_processes(const struct store_result *res, int value_idx, size_t *nr)
{
	struct proc_sum *ps = calloc(res->nr_rows + 1, sizeof(*ps));
	size_t n = 0;

	if (!ps)
		return NULL;
	for (size_t i = 0; i < res->nr_rows; i++) {
		const struct store_row *r = &res->rows[i];

		ps[i] = (struct proc_sum){ r->pid, r->tid == r->pid, r->comm, r->exe, r->values[0],
					   r->values[value_idx] };
	}
	qsort(ps, res->nr_rows, sizeof(*ps), by_pid);
	for (size_t i = 0; i < res->nr_rows; i++) {
		struct proc_sum *last = n ? &ps[n - 1] : NULL;

		if (!last || last->pid != ps[i].pid) {
			ps[n++] = ps[i];
			continue;
		}
		last->samples += ps[i].samples;
		last->value += ps[i].value;
		if (!last->main_thread && ps[i].main_thread) {
			last->main_thread = true;
			last->comm = ps[i].comm;
		}
	}
	qsort(ps, n, sizeof(*ps), by_samples_desc);
	*nr = n;
	return ps;
}

void webui__processes(const struct http_request *req, struct http_response *resp, void *ctx)
{
	struct daemon *d = ctx;
	const char *type = http__query(req, "type");
	const char *seconds = http__query(req, "seconds");
	uint64_t retention_s = store__retention_ns(d->ctx.store) / NSEC_PER_SEC;
	const struct profile_desc *desc = profile__by_name(type ? type : "cpu");
	const struct query_sources src = { .store = d->ctx.store, .history = d->history };
	struct query_window w = { 0 };
	const struct store_result *res;
	struct query_result *qr = NULL;
	struct proc_sum *ps;
	json_t *list;
	uint64_t n = DEFAULT_SECONDS;
	size_t nr = 0;
	int err;

	if (!desc) {
		http__error(resp, 400, "type: \"%s\" is not a profile type (GET /api/v1/profiles)",
			    type);
		return;
	}
	if (seconds) {
		char *end;

		errno = 0;
		n = strtoull(seconds, &end, 10);
		if (errno || *end || !n || *seconds < '0' || *seconds > '9') {
			http__error(resp, 400, "seconds: \"%s\" is not a positive whole number",
				    seconds);
			return;
		}
		if (n > retention_s) {
			http__error(resp, 400,
				    "seconds: %" PRIu64 " is beyond the retention of %" PRIu64
				    " s (profile.retention)",
				    n, retention_s);
			return;
		}
	} else if (n > retention_s) {
		n = retention_s;
	}
	/* A type without a window (the live heap) lists its processes over the retention. */
	if (!query__windowed(desc->type))
		n = retention_s;
	desc = profile__desc(query__process_type(desc->type));
	/* start= and end=: the processes of that range, from disk and memory alike. */
	if (params__range(d, req, (long long)n, seconds != NULL, &w, resp))
		return;
	if (!w.end_ns)
		w.window_ns = n * NSEC_PER_SEC;
	err = query__profile(&src, desc->type, &w, NULL, &qr);
	if (err) {
		http__error(resp, 503, "query failed: %s", strerror(-err));
		return;
	}
	res = query_result__rows(qr);
	ps = sum_processes(res, (int)(folded_value(desc) - desc->values), &nr);
	list = ps ? json_array() : NULL;
	err = list ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < nr; i++)
		err = json_array_append_new(list, json_pack("{s:I,s:o,s:o,s:o,s:o}", "pid",
							    (json_int_t)ps[i].pid, "comm",
							    json__str(ps[i].comm), "exe",
							    json__str(ps[i].exe), "samples",
							    json__u64(ps[i].samples), "value",
							    json__u64(ps[i].value)));
	if (err) {
		json_decref(list);
		list = NULL;
	}
	resp->content_type = "application/json";
	err = json__writeln(&resp->body,
			    json_pack("{s:o,s:o,s:o,s:o}", "type", json__str(type ? type : "cpu"),
				      "seconds", json__u64(n), "unit",
				      json__str(folded_value(desc)->unit), "processes", list),
			    JSON_COMPACT);
	if (err)
		http__error(resp, 500, "out of memory");
	free(ps);
	query_result__free(qr);
}
