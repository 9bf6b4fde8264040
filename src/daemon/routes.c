// SPDX-License-Identifier: GPL-2.0-only
/* autoprof's one HTTP route table and its handlers. */
#define pr_fmt(fmt) "http: " fmt

#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sample/offcpu.h"
#include "history/history.h"
#include "memory/memory.h"
#include "probes/probes.h"
#include "daemon/daemon.h"
#include "daemon/params.h"
#include "export/pprof.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "store/profiles.h"
#include "query/query.h"
#include "store/store.h"
#include "lib/hex.h"
#include "lib/json.h"
#include "lib/timeconst.h"
#include "http/http.h"
#include "daemon/webui.h"

static void handle_index(const struct http_request *req, struct http_response *resp, void *ctx);
static void handle_route_index(const struct http_request *req, struct http_response *resp,
			       void *ctx);
static void handle_profile(const struct http_request *req, struct http_response *resp, void *ctx);
static void handle_offcpu_config(const struct http_request *req, struct http_response *resp,
				 void *ctx);
static void handle_heap(const struct http_request *req, struct http_response *resp, void *ctx);
static void handle_targets_list(const struct http_request *req, struct http_response *resp,
				void *ctx);
static void handle_targets_add(const struct http_request *req, struct http_response *resp,
			       void *ctx);
static void handle_targets_delete(const struct http_request *req, struct http_response *resp,
				  void *ctx);
static void handle_probes_list(const struct http_request *req, struct http_response *resp,
			       void *ctx);
static void handle_probes_add(const struct http_request *req, struct http_response *resp,
			      void *ctx);
static void handle_probes_delete(const struct http_request *req, struct http_response *resp,
				 void *ctx);
static void handle_probes_latency(const struct http_request *req, struct http_response *resp,
				  void *ctx);
static void handle_healthy(const struct http_request *req, struct http_response *resp, void *ctx);
static void handle_ready(const struct http_request *req, struct http_response *resp, void *ctx);
static void handle_status(const struct http_request *req, struct http_response *resp, void *ctx);

static const struct http_route routes[] = {
	{ "GET", "/", "index",
	  "The live web view for browsers (Accept: text/html); this list for other clients",
	  .fn = handle_index },
	{ "GET", "/debug/", "index", "This list of endpoints", .fn = handle_route_index },
	{ "GET", "/api/v1/profiles", "webui",
	  "Profile types (JSON): name, endpoint, unit of the folded values, whether collected",
	  .fn = webui__profiles },
	{ "GET", "/api/v1/processes", "webui",
	  "Processes with samples in the last N seconds (JSON), most first: ?type=cpu|offcpu|"
	  "allocs|heap|gpuallocs|gpuheap&seconds=N (default 30)",
	  .fn = webui__processes },
	{ "GET", "/api/v1/timeline", "timeline",
	  "Totals per step of a profile type (JSON), overall and for the top processes, for a "
	  "timeline: ?type=cpu&start=&end= (RFC 3339 or Unix seconds; default the last hour)"
	  "&step=SECONDS&pid=1,2",
	  .fn = webui__timeline },
	{ "GET", "/api/v1/source", "source",
	  "One function's samples by source line (JSON): ?function=NAME (as the folded format "
	  "names it)&type=cpu&seconds=N or start=&end=&pid=1,2: per binary and file its symbol, "
	  "lines with self and total, and the source text around them (admin API on, files "
	  "named like source code)",
	  .fn = webui__source },
	{ "GET", "/api/v1/status", "status",
	  "Server state (JSON): admin_api (whether the routes that change state are on), ready",
	  .fn = handle_status },
	{ "GET", "/-/healthy", "healthy", "200 while the process runs", .fn = handle_healthy },
	{ "GET", "/-/ready", "ready",
	  "200 once samplers are attached and the processes running at start scanned (their "
	  "unwind tables built, trace contexts found), 503 before", .fn = handle_ready },
	{ "GET", "/debug/pprof/profile", "profile",
	  "On-CPU profile of the last N seconds, answered at once: ?seconds=N (default 30), "
	  "pid=1,2 (processes), comm=NAME (process or thread name), trace_id=HEX, span_id=HEX, "
	  "format=folded; probe=ID: only samples inside that probe's calls (labelled arg.NAME "
	  "with the values it captures), latency=slow|fast (above or at most its threshold), "
	  "where=NAME>N (=, !=, <, <=, >, >=: a captured value), format=diff: both as sample "
	  "types slow_samples/count, slow_cpu/nanoseconds, fast_samples/count, "
	  "fast_cpu/nanoseconds",
	  .fn = handle_profile, .heavy = true },
	{ "GET", "/debug/pprof/offcpu", "offcpu",
	  "Off-CPU profile of the last N seconds: where threads blocked and for how long "
	  "(offcpu/nanoseconds), same parameters as /debug/pprof/profile",
	  .fn = handle_profile, .heavy = true },
	{ "GET", "/debug/offcpu/config", "offcpu_config",
	  "Off-CPU settings in effect (JSON); POST ?enabled=BOOL&min_block=DURATION&"
	  "sample_probability=0..1 changes them at once",
	  .fn = handle_offcpu_config },
	{ "POST", "/debug/offcpu/config", "offcpu_config", NULL, .fn = handle_offcpu_config,
	  .mutates = true },
	{ "GET", "/debug/pprof/allocs", "allocs",
	  "Sampled allocations of the last N seconds (memory targets): ?seconds=N (default 30), "
	  "pid=1,2, comm=NAME, format=folded",
	  .fn = handle_profile, .heavy = true },
	{ "GET", "/debug/pprof/heap", "heap",
	  "Live sampled allocations now (inuse_*) and allocations over the retention (alloc_*) "
	  "of memory targets: ?pid=1,2, format=folded (inuse_space)",
	  .fn = handle_heap, .heavy = true },
	{ "GET", "/debug/pprof/gpuallocs", "gpuallocs",
	  "GPU memory allocations (CUDA) of the last N seconds, every one, labelled gpu (device "
	  "ordinal) and api (runtime, driver, vmm, managed, async, host_pinned, pytorch): "
	  "?seconds=N (default 30), pid=1,2, comm=NAME, format=folded (gpu_alloc_space)",
	  .fn = handle_profile, .heavy = true },
	{ "GET", "/debug/pprof/gpuheap", "gpuheap",
	  "GPU memory live now (gpu_inuse_*) and allocations over the retention (gpu_alloc_*): "
	  "?pid=1,2, format=folded (gpu_inuse_space)",
	  .fn = handle_heap, .heavy = true },
	{ "GET", "/api/v1/targets/memory", "memory_targets",
	  "Memory-profiled targets (JSON); POST {\"pid\": N}, {\"exe\": \"glob\"} or "
	  "{\"cgroup\": \"dir\"} adds one, "
	  "DELETE /api/v1/targets/memory/ID removes it",
	  .fn = handle_targets_list },
	{ "POST", "/api/v1/targets/memory", "memory_targets", NULL, .fn = handle_targets_add,
	  .mutates = true },
	{ "DELETE", "/api/v1/targets/memory/*", "memory_targets", NULL, .fn = handle_targets_delete,
	  .mutates = true },
	{ "GET", "/api/v1/probes", "probes",
	  "Latency probes (JSON); POST {\"binary\": PATH, \"function\": SYM} or {\"binary\": "
	  "PATH, \"location\": \"file.c:LINE\"} (optional pid, name, threshold, inside: "
	  "{probe, latency}, capture: [\"len\", \"req->id\"]) adds one, DELETE "
	  "/api/v1/probes/ID removes it",
	  .fn = handle_probes_list },
	{ "POST", "/api/v1/probes", "probes", NULL, .fn = handle_probes_add, .mutates = true },
	{ "DELETE", "/api/v1/probes/*", "probes", NULL, .fn = handle_probes_delete, .mutates = true },
	{ "GET", "/api/v1/probes/*/latency", "probe_latency",
	  "A probe's call durations (JSON): ?seconds=N (default 60), group_by=CAPTURE (the "
	  "quantiles per captured value, or power-of-two range): count, p50/p90/p95/p99, "
	  "their moving average over all time, threshold, histogram buckets",
	  .fn = handle_probes_latency },
	{ "GET", "/metrics", "metrics",
	  "autoprof's own health (Prometheus text; OpenMetrics when asked)", .fn = http__metrics },
};

/* Browsers get the web view, other clients (curl, scripts) the list of endpoints. */
static void handle_index(const struct http_request *req, struct http_response *resp, void *ctx)
{
	if (webui__wanted(req))
		webui__page(req, resp);
	else
		handle_route_index(req, resp, ctx);
}

static void handle_route_index(const struct http_request *req, struct http_response *resp,
			       void *ctx)
{
	(void)req;
	(void)ctx;
	http__index(routes, sizeof(routes) / sizeof(routes[0]), resp);
}

/* Exactly n bytes as 2n hex digits (either case). 0 or -EINVAL. */
static int parse_hex(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < 2 * n; i++) {
		int v = hex__digit(s[i]);

		if (v < 0)
			return -EINVAL;
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
	}
	return 0;
}

/* probe=ID and latency=slow|fast of a CPU profile into the filter. 0, or -EINVAL answered. */
static int parse_probe_filter(struct daemon *d, const struct profile_desc *desc, const char *probe,
			      const char *latency, bool diff, struct store_filter *filter,
			      struct http_response *resp)
{
	long long id;

	if (!probe) {
		if (latency || diff) {
			http__error(resp, 400, "%s: needs probe=ID", latency ? "latency" : "format=diff");
			return -EINVAL;
		}
		return 0;
	}
	if (desc->type != PROFILE_CPU) {
		http__error(resp, 400, "probe: on-CPU profiles only (/debug/pprof/profile)");
		return -EINVAL;
	}
	id = params__uint(probe);
	if (id <= 0 || id > UINT32_MAX || !d->probes || !probes__exists(d->probes, (uint32_t)id)) {
		http__error(resp, 400, "probe: \"%s\" is not a probe id (GET /api/v1/probes)", probe);
		return -EINVAL;
	}
	filter->probe = (uint32_t)id;
	if (!latency || diff) {
		if (latency) {
			http__error(resp, 400, "latency: format=diff holds both");
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(latency, "slow")) {
		filter->latency = STORE_LATENCY_SLOW;
	} else if (!strcmp(latency, "fast")) {
		filter->latency = STORE_LATENCY_FAST;
	} else {
		http__error(resp, 400, "latency: \"%s\" is not slow or fast", latency);
		return -EINVAL;
	}
	return 0;
}

static void handle_profile(const struct http_request *req, struct http_response *resp, void *ctx)
{
	struct daemon *d = ctx;
	const struct profile_desc *desc = profile__by_path(http__path(req));
	const char *pid = http__query(req, "pid");
	const char *comm = http__query(req, "comm");
	const char *format = http__query(req, "format");
	const char *trace_id = http__query(req, "trace_id");
	const char *span_id = http__query(req, "span_id");
	const char *probe = http__query(req, "probe");
	const char *latency = http__query(req, "latency");
	const char *where = http__query(req, "where");
	char where_name[PROBE_CAPTURE_MAX];
	struct store_where wh;
	uint8_t trace_bytes[16], span_bytes[8];
	const struct query_sources src = { .store = d->ctx.store,
					   .memory = d->memory,
					   .gpumem = d->gpumem,
					   .history = d->history };
	struct store_filter filter = { 0 };
	const struct store_result *res;
	struct query_window w = { 0 };
	struct query_result *qr;
	uint32_t pids[MAX_PIDS];
	bool folded = false, diff = false;
	int err;

	if (!desc) {
		http__error(resp, 404, "no profile type at %s", http__path(req));
		return;
	}
	if (desc->type == PROFILE_GPUALLOCS && !d->gpumem) {
		http__error(resp, 503, "GPU memory profiling is not running (gpu.enabled)");
		return;
	}
	if (params__window(d, req, &w, resp))
		return;
	if (pid) {
		if (params__pids(pid, pids, &filter.nr_pids, resp))
			return;
		filter.pids = pids;
	}
	if (comm) {
		if (!*comm || strlen(comm) > 255) {
			http__error(resp, 400, "comm: must be 1 to 255 characters");
			return;
		}
		filter.comm = comm;
	}
	if (trace_id) {
		if (parse_hex(trace_id, trace_bytes, sizeof(trace_bytes))) {
			http__error(resp, 400, "trace_id: \"%s\" is not 32 hex digits", trace_id);
			return;
		}
		filter.trace_id = trace_bytes;
	}
	if (span_id) {
		if (parse_hex(span_id, span_bytes, sizeof(span_bytes))) {
			http__error(resp, 400, "span_id: \"%s\" is not 16 hex digits", span_id);
			return;
		}
		filter.span_id = span_bytes;
	}
	if (format) {
		if (!strcmp(format, "folded")) {
			folded = true;
		} else if (!strcmp(format, "diff")) {
			diff = true;
		} else if (strcmp(format, "pprof") && strcmp(format, "proto")) {
			http__error(resp, 400, "format: \"%s\" is not one of pprof, folded, diff",
				    format);
			return;
		}
	}
	if (parse_probe_filter(d, desc, probe, latency, diff, &filter, resp))
		return;
	if (where) {
		if (!filter.probe) {
			http__error(resp, 400, "where: needs probe=ID (it tests a value the probe "
					       "captures)");
			return;
		}
		if (params__where(where, &wh, where_name, sizeof(where_name), resp))
			return;
		if (!probes__captures(d->probes, filter.probe, where_name)) {
			http__error(resp, 400, "where: probe %u captures no \"%s\" (its \"capture\" "
					       "list)", filter.probe, where_name);
			return;
		}
		filter.where = &wh;
	}

	/* format=diff is the probe's slow and fast calls side by side (query.h). */
	err = query__profile(&src, diff ? PROFILE_LATENCY : desc->type, &w, &filter, &qr);
	if (err) {
		http__error(resp, 503, "query failed: %s", strerror(-err));
		return;
	}
	res = query_result__rows(qr);
	if (folded) {
		err = folded__encode(res, d->ctx.sym, &resp->body);
		resp->content_type = "text/plain; charset=utf-8";
	} else {
		err = pprof__encode(res, d->ctx.sym, &resp->body);
	}
	if (!folded) {
		resp->content_type = "application/octet-stream";
		resp->content_disposition = "attachment; filename=\"profile\"";
	}
	query_result__free(qr);
	if (err) {
		buf__reset(&resp->body);
		http__error(resp, 500, "encoding failed: %s", strerror(-err));
	}
}

/* Run-time off-CPU settings: each parameter is parsed and bounded as its offcpu.* key. */
enum offcpu_param { OFFCPU_ENABLED, OFFCPU_MIN_BLOCK, OFFCPU_SAMPLE_PROBABILITY, OFFCPU__NR };

static const char *const offcpu_params[OFFCPU__NR][2] = {
	[OFFCPU_ENABLED] = { "enabled", "offcpu.enabled" },
	[OFFCPU_MIN_BLOCK] = { "min_block", "offcpu.min-block" },
	[OFFCPU_SAMPLE_PROBABILITY] = { "sample_probability", "offcpu.sample-probability" },
};

static void handle_offcpu_config(const struct http_request *req, struct http_response *resp,
				 void *ctx)
{
	struct daemon *d = ctx;
	bool post = !strcmp(http__method(req), "POST");
	struct offcpu_settings s;
	unsigned int given = 0;
	char why[256];
	int err;

	if (!d->offcpu) {
		http__error(resp, 503, "off-CPU profiling is unavailable on this kernel");
		return;
	}
	offcpu__settings(d->offcpu, &s);
	for (unsigned int i = 0; i < OFFCPU__NR; i++) {
		const char *v = http__query(req, offcpu_params[i][0]);
		uint64_t n;

		if (!v)
			continue;
		if (!post) {
			http__error(resp, 400, "%s: settings change with POST", offcpu_params[i][0]);
			return;
		}
		if (config__parse_key(offcpu_params[i][1], v, &n, why, sizeof(why))) {
			http__error(resp, 400, "%s: %s", offcpu_params[i][0], why);
			return;
		}
		given++;
		if (i == OFFCPU_ENABLED)
			s.enabled = n;
		else if (i == OFFCPU_MIN_BLOCK)
			s.min_block_ns = n;
		else
			s.sample_ppm = (uint32_t)n;
	}
	if (post && !given) {
		http__error(resp, 400, "no setting given: enabled, min_block or sample_probability");
		return;
	}
	if (given) {
		err = offcpu__configure(d->offcpu, &s);
		if (err) {
			http__error(resp, 500, "cannot apply: %s", strerror(-err));
			return;
		}
	}
	resp->content_type = "application/json";
	/*
	 * The probability has always been written as a fixed six-decimal ppm (0.500000), which
	 * clients may compare as text; jansson writes reals in their shortest form (0.5). So the
	 * object's other members are jansson's, without braces, and that one member is written
	 * here.
	 */
	err = buf__puts(&resp->body, "{") ?:
	      json__write(&resp->body,
			  json_pack("{s:b,s:o}", "enabled", !!s.enabled, "min_block_ns",
				    json__u64(s.min_block_ns)),
			  JSON_COMPACT | JSON_EMBED) ?:
	      buf__printf(&resp->body, ",\"sample_probability\":%u.%06u}\n",
			  s.sample_ppm / 1000000, s.sample_ppm % 1000000);
	if (err)
		http__error(resp, 500, "out of memory");
}

/* Live rows (inuse_*) beside the allocations over the retention (alloc_*), of memory (heap)
 * or GPU memory (gpuheap), or of a start=/end= range: query.h. */
static void handle_heap(const struct http_request *req, struct http_response *resp, void *ctx)
{
	struct daemon *d = ctx;
	const struct profile_desc *desc = profile__by_path(http__path(req));
	const char *pid = http__query(req, "pid");
	const char *format = http__query(req, "format");
	const struct query_sources src = { .store = d->ctx.store,
					   .memory = d->memory,
					   .gpumem = d->gpumem,
					   .history = d->history };
	struct query_window w = { 0 };
	struct store_filter filter = { 0 };
	const struct store_result *heap;
	struct query_result *qr = NULL;
	uint32_t pids[MAX_PIDS];
	int err;

	if (desc->type == PROFILE_GPUHEAP ? !d->gpumem : !d->memory) {
		http__error(resp, 503, "%s profiling is not running%s",
			    desc->type == PROFILE_GPUHEAP ? "GPU memory" : "memory",
			    desc->type == PROFILE_GPUHEAP ? " (gpu.enabled)" : "");
		return;
	}
	if (pid) {
		if (params__pids(pid, pids, &filter.nr_pids, resp))
			return;
		filter.pids = pids;
	}
	if (format && strcmp(format, "folded") && strcmp(format, "pprof") && strcmp(format, "proto")) {
		http__error(resp, 400, "format: \"%s\" is not one of pprof, folded", format);
		return;
	}
	/* start= and end=: the range's allocations, and what was live at its end (query.h). */
	if (params__range(d, req, (long long)(store__retention_ns(d->ctx.store) / NSEC_PER_SEC),
			  false, &w, resp))
		return;
	if (!w.end_ns)
		w.window_ns = store__retention_ns(d->ctx.store);
	err = query__profile(&src, desc->type, &w, &filter, &qr);
	if (err) {
		http__error(resp, 503, "query failed: %s", strerror(-err));
		return;
	}
	heap = query_result__rows(qr);
	if (format && !strcmp(format, "folded")) {
		err = folded__encode(heap, d->ctx.sym, &resp->body);
		resp->content_type = "text/plain; charset=utf-8";
	} else {
		err = pprof__encode(heap, d->ctx.sym, &resp->body);
		resp->content_type = "application/octet-stream";
		resp->content_disposition = "attachment; filename=\"profile\"";
	}
	if (err) {
		buf__reset(&resp->body);
		http__error(resp, 500, "encoding failed: %s", strerror(-err));
	}
	query_result__free(qr);
}

static void handle_targets_list(const struct http_request *req, struct http_response *resp,
				void *ctx)
{
	struct daemon *d = ctx;

	if (!d->memory) {
		http__error(resp, 503, "memory profiling is not running");
		return;
	}

	(void)req;
	resp->content_type = "application/json";
	if (memory__list_targets(d->memory, &resp->body)) {
		buf__reset(&resp->body);
		http__error(resp, 500, "out of memory");
	}
}

static void handle_targets_add(const struct http_request *req, struct http_response *resp,
			       void *ctx)
{
	struct daemon *d = ctx;
	struct memtarget_spec spec;
	char why[256];
	uint32_t id;
	size_t len;

	if (!d->memory) {
		http__error(resp, 503, "memory profiling is not running");
		return;
	}

	if (memtarget__parse(http__body(req, &len), &spec, why, sizeof(why))) {
		http__error(resp, 400, "%s", why);
		return;
	}
	switch (memory__add_target(d->memory, &spec, &id)) {
	case 0:
		break;
	case -ESRCH:
		http__error(resp, 400, "pid %u: no such process", spec.pid);
		return;
	case -ENOSPC:
		http__error(resp, 400, "at most %d memory targets: remove one first",
			    MEMORY_MAX_TARGETS);
		return;
	default:
		http__error(resp, 500, "out of memory");
		return;
	}
	resp->content_type = "application/json";
	if (json__writeln(&resp->body, json_pack("{s:I}", "id", (json_int_t)id), 0))
		http__error(resp, 500, "out of memory");
}

static void handle_targets_delete(const struct http_request *req, struct http_response *resp,
				  void *ctx)
{
	struct daemon *d = ctx;
	const char *id = strrchr(http__path(req), '/') + 1;
	long long n = params__uint(id);

	if (!d->memory) {
		http__error(resp, 503, "memory profiling is not running");
		return;
	}

	if (n <= 0 || n > UINT32_MAX) {
		http__error(resp, 400, "\"%s\" is not a target id", id);
		return;
	}
	if (memory__remove_target(d->memory, (uint32_t)n)) {
		http__error(resp, 404, "no memory target %lld", n);
		return;
	}
	resp->content_type = "application/json";
	if (json__writeln(&resp->body, json_pack("{s:I}", "id", (json_int_t)n), 0))
		http__error(resp, 500, "out of memory");
}

/* The probe API answers errors in JSON, {"error": "reason"}. */
static void json_error(struct http_response *resp, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void json_error(struct http_response *resp, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	buf__reset(&resp->body);
	resp->status = status;
	resp->content_type = "application/json";
	/* Out of memory: the status alone says it, with an empty body. */
	json__writeln(&resp->body, json_pack("{s:o}", "error", json__str(msg)), 0);
}

/* The ID of /api/v1/probes/ID[/...], or -1. */
static long long probe_id_of(const char *path)
{
	const char *s = path + strlen("/api/v1/probes/");
	char id[24];
	size_t len = strcspn(s, "/");

	if (!len || len >= sizeof(id))
		return -1;
	memcpy(id, s, len);
	id[len] = '\0';
	return params__uint(id);
}

static void handle_probes_list(const struct http_request *req, struct http_response *resp,
			       void *ctx)
{
	struct daemon *d = ctx;

	(void)req;
	if (!d->probes) {
		json_error(resp, 503, "latency probes are not running");
		return;
	}
	resp->content_type = "application/json";
	if (probes__list(d->probes, &resp->body))
		json_error(resp, 500, "out of memory");
}

static void handle_probes_add(const struct http_request *req, struct http_response *resp,
			      void *ctx)
{
	struct daemon *d = ctx;
	struct probe_spec *spec;
	char why[512];
	uint32_t id;
	size_t len;
	int err;

	if (!d->probes) {
		json_error(resp, 503, "latency probes are not running");
		return;
	}
	spec = malloc(sizeof(*spec));
	if (!spec) {
		json_error(resp, 500, "out of memory");
		return;
	}
	err = probespec__parse(http__body(req, &len), spec, why, sizeof(why)) ?:
	      probes__add(d->probes, spec, &id, why, sizeof(why));
	free(spec);
	if (err) {
		json_error(resp, err == -EINVAL ? 400 : 500, "%s", why);
		return;
	}
	resp->status = 201;
	resp->content_type = "application/json";
	if (json__writeln(&resp->body, json_pack("{s:I}", "id", (json_int_t)id), 0))
		json_error(resp, 500, "out of memory");
}

static void handle_probes_delete(const struct http_request *req, struct http_response *resp,
				 void *ctx)
{
	struct daemon *d = ctx;
	long long id = probe_id_of(http__path(req));

	if (!d->probes) {
		json_error(resp, 503, "latency probes are not running");
		return;
	}
	if (id <= 0 || id > UINT32_MAX) {
		json_error(resp, 400, "not a probe id");
		return;
	}
	if (probes__remove(d->probes, (uint32_t)id)) {
		json_error(resp, 404, "no probe %lld", id);
		return;
	}
	resp->status = 204;
}

static void handle_probes_latency(const struct http_request *req, struct http_response *resp,
				  void *ctx)
{
	struct daemon *d = ctx;
	long long id = probe_id_of(http__path(req)), n = 60;
	const char *seconds = http__query(req, "seconds");
	const char *group_by = http__query(req, "group_by");
	char why[256];
	int err;

	if (!d->probes) {
		json_error(resp, 503, "latency probes are not running");
		return;
	}
	if (id <= 0 || id > UINT32_MAX) {
		json_error(resp, 400, "not a probe id");
		return;
	}
	if (seconds) {
		n = params__uint(seconds);
		if (n <= 0 || n > PROBES_MAX_SECONDS) {
			json_error(resp, 400, "seconds: want a whole number from 1 to %d",
				   PROBES_MAX_SECONDS);
			return;
		}
	}
	resp->content_type = "application/json";
	err = probes__latency(d->probes, (uint32_t)id, (unsigned int)n, group_by, &resp->body, why,
			      sizeof(why));
	if (err)
		json_error(resp, err == -EINVAL ? 400 : 404, "%s", why);
}

/* Prometheus' wording, so probes written for it read ours. */
static void handle_healthy(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	buf__puts(&resp->body, "autoprof is Healthy.\n");
}

static void handle_ready(const struct http_request *req, struct http_response *resp, void *ctx)
{
	struct daemon *d = ctx;

	(void)req;
	if (!__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE)) {
		http__error(resp, 503, "autoprof is not ready: still starting.");
		return;
	}
	buf__puts(&resp->body, "autoprof is Ready.\n");
}

static void handle_status(const struct http_request *req, struct http_response *resp, void *ctx)
{
	struct daemon *d = ctx;

	(void)req;
	resp->content_type = "application/json";
	if (json__writeln(&resp->body,
			  json_pack("{s:b,s:b}", "admin_api", !!d->cfg.web_enable_admin_api,
				    "ready", !!__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE)),
			  JSON_COMPACT))
		http__error(resp, 500, "out of memory");
}

int routes__start(struct daemon *d)
{
	int err = 0;

	d->http = http_server__start_opts(&(struct http_server_opts){
						  .listen = d->cfg.web_listen_address,
						  .web = d->web,
						  .admin_api = d->cfg.web_enable_admin_api,
					  },
					  routes, sizeof(routes) / sizeof(routes[0]), d, &err);
	if (!d->http) {
		fprintf(stderr, "autoprof: cannot listen on %s: %s\n", d->cfg.web_listen_address,
			strerror(-err));
		return err ? err : -EINVAL;
	}
	return 0;
}
