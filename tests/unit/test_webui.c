/* DEPS: src/daemon/webui.c src/http/server.c src/http/listen.c src/http/webconfig.c src/store/store.c src/store/profiles.c src/lib/metrics.c src/lib/buf.c src/lib/json.c src/lib/log.c src/lib/strtab.c tests/unit/fake_symbolizer.c src/query/query.c src/daemon/params.c src/lib/timeparse.c tests/unit/query_stubs.c src/lib/ufile.c src/lib/procfs.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The web view's endpoints over real HTTP: the page by content negotiation (with a stand-in for
 * the page webui_page.S links in), the profile-type list, and processes summed from a real store.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <time.h>
#include <zlib.h>

#include "src/daemon/daemon.h"
#include "http/http.h"
#include "src/daemon/webui.h"
#include "lib/log.h"
#include "lib/timeconst.h"
#include "store/store.h"
#include "fake_symbolizer.h"
#include "testlib.h"

/* Stands in for webui_page.S: the page as the build would link it. */
const char webui_page_start[] = "<!DOCTYPE html><title>autoprof</title><div id=\"flame\"></div>"
				"<script>/* a page long enough that gzip makes it smaller */"
				"</script><!-- padding padding padding padding padding -->";
const uint64_t webui_page_size = sizeof(webui_page_start) - 1;

static void index_or_page(const struct http_request *req, struct http_response *resp, void *ctx)
{
	(void)ctx;
	if (webui__wanted(req))
		webui__page(req, resp);
	else
		buf__puts(&resp->body, "index\n");
}

static const struct http_route routes[] = {
	{ "GET", "/", "index", NULL, .fn = index_or_page },
	{ "GET", "/api/v1/profiles", "webui", NULL, .fn = webui__profiles },
	{ "GET", "/api/v1/processes", "webui", NULL, .fn = webui__processes },
};

static struct daemon d;
static struct http_server *srv;
static struct dso *app;

struct reply {
	int status;
	char headers[4096];
	struct buf body;
};

/* curl -i with the given arguments, path appended to the server's address. */
static int get(struct reply *r, const char *args, const char *fmt, ...)
{
	char path[512], cmd[1024], chunk[4096];
	struct buf out = {};
	const char *end;
	va_list ap;
	size_t n;
	FILE *f;

	memset(r, 0, sizeof(*r));
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "curl -sS -i --max-time 10 %s 'http://127.0.0.1:%d%s'", args,
		 http_server__port(srv), path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf__append(&out, chunk, n);
	pclose(f);
	end = out.data ? strstr(out.data, "\r\n\r\n") : NULL;
	if (!end || strncmp(out.data, "HTTP/", 5)) {
		buf__free(&out);
		return -1;
	}
	r->status = atoi(strchr(out.data, ' ') + 1);
	snprintf(r->headers, sizeof(r->headers), "%.*s", (int)(end - out.data + 2), out.data);
	buf__append(&r->body, end + 4, out.len - (size_t)(end + 4 - out.data));
	if (!r->body.data)
		buf__puts(&r->body, "");
	buf__free(&out);
	return 0;
}

static int add(enum profile_type type, uint32_t pid, uint32_t tid, const char *comm,
	       const char *exe, uint64_t addr, uint64_t samples)
{
	struct frame f = { .dso = app, .addr = addr };
	struct sample s = {
		.type = type,
		.pid = pid,
		.tid = tid,
		.time_ns = now_ns(),
		.comm = comm,
		.exe = exe,
		.frames = &f,
		.nr_frames = 1,
		.values = { samples, samples * 10101010 },
	};

	return store__add(d.ctx.store, &s);
}

TEST(start)
{
	struct store_opts opts = { .retention_ns = 60 * NSEC_PER_SEC, .memory_limit = 16 << 20 };
	int err = 0;

	d.ctx.store = store__new(&opts);
	CHECK(d.ctx.store);
	app = fake_dso__new(DSO_ELF, "/usr/bin/app", "");
	CHECK(app);
	srv = http_server__start("127.0.0.1:0", routes, sizeof(routes) / sizeof(routes[0]), &d,
				 &err);
	CHECK(srv);
}

TEST(page_for_browsers_only)
{
	struct reply r;

	CHECK(!get(&r, "", "/"));
	CHECK_EQ(r.status, 200);
	CHECK_STR(r.body.data, "index\n");
	buf__free(&r.body);

	CHECK(!get(&r, "-H 'Accept: text/html,application/xhtml+xml,*/*;q=0.8'", "/"));
	CHECK_EQ(r.status, 200);
	CHECK(strcasestr(r.headers, "Content-Type: text/html; charset=utf-8"));
	CHECK(!strcasestr(r.headers, "Content-Encoding"));
	CHECK_EQ(r.body.len, webui_page_size);
	CHECK(!memcmp(r.body.data, webui_page_start, webui_page_size));
	buf__free(&r.body);
	CHECK(webui__built());
}

TEST(page_gzipped_when_accepted)
{
	char page[1024];
	uLongf len = sizeof(page);
	struct reply r;
	z_stream z = {};

	CHECK(!get(&r, "-H 'Accept: text/html' -H 'Accept-Encoding: gzip, br'", "/"));
	CHECK_EQ(r.status, 200);
	CHECK(strcasestr(r.headers, "Content-Encoding: gzip"));
	CHECK(r.body.len < webui_page_size);
	/* 16 + MAX_WBITS: a gzip stream, header and trailer checked. */
	CHECK_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (Bytef *)r.body.data;
	z.avail_in = (uInt)r.body.len;
	z.next_out = (Bytef *)page;
	z.avail_out = (uInt)len;
	CHECK_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
	CHECK_EQ(z.total_out, webui_page_size);
	CHECK(!memcmp(page, webui_page_start, webui_page_size));
	inflateEnd(&z);
	buf__free(&r.body);
}

TEST(profiles_list)
{
	struct reply r;

	CHECK(!get(&r, "", "/api/v1/profiles"));
	CHECK_EQ(r.status, 200);
	CHECK(strcasestr(r.headers, "Content-Type: application/json"));
	CHECK(strstr(r.body.data, "{\"retention_s\":60,\"profiles\":[{\"name\":\"cpu\","
				  "\"path\":\"/debug/pprof/profile\","));
	/* cpu's folded values count samples, offcpu's nanoseconds; heap takes no window. */
	CHECK(strstr(r.body.data, "\"value_type\":\"samples\",\"unit\":\"count\",\"windowed\":true,"
				  "\"available\":false}"));
	CHECK(strstr(r.body.data, "\"value_type\":\"offcpu\",\"unit\":\"nanoseconds\""));
	CHECK(strstr(r.body.data, "\"name\":\"heap\""));
	CHECK(strstr(r.body.data, "\"unit\":\"bytes\",\"windowed\":false"));
	buf__free(&r.body);
}

TEST(processes_summed_per_pid)
{
	struct reply r;

	/* pid 10: two threads, the main one named with characters JSON must escape. */
	CHECK(!add(PROFILE_CPU, 10, 11, "worker", "app", 0x100, 5));
	CHECK(!add(PROFILE_CPU, 10, 11, "worker", "app", 0x200, 2));
	CHECK(!add(PROFILE_CPU, 10, 10, "a\"b\\c\n", "app", 0x100, 3));
	CHECK(!add(PROFILE_CPU, 20, 20, "busy", "busy", 0x100, 40));
	CHECK(!add(PROFILE_CPU, 30, 31, "lone", "other", 0x100, 1));
	CHECK(!add(PROFILE_OFFCPU, 40, 40, "sleeper", "sleeper", 0x100, 1));

	CHECK(!get(&r, "", "/api/v1/processes?seconds=10"));
	CHECK_EQ(r.status, 200);
	CHECK_STR(r.body.data,
		  "{\"type\":\"cpu\",\"seconds\":10,\"unit\":\"count\",\"processes\":["
		  "{\"pid\":20,\"comm\":\"busy\",\"exe\":\"busy\",\"samples\":40,\"value\":40},"
		  "{\"pid\":10,\"comm\":\"a\\\"b\\\\c\\n\",\"exe\":\"app\",\"samples\":10,"
		  "\"value\":10},"
		  "{\"pid\":30,\"comm\":\"lone\",\"exe\":\"other\",\"samples\":1,\"value\":1}]}\n");
	buf__free(&r.body);

	/* Another type, its own processes; offcpu's value is its default, nanoseconds. */
	CHECK(!get(&r, "", "/api/v1/processes?type=offcpu"));
	CHECK_EQ(r.status, 200);
	CHECK_STR(r.body.data, "{\"type\":\"offcpu\",\"seconds\":30,\"unit\":\"nanoseconds\","
			       "\"processes\":[{\"pid\":40,\"comm\":\"sleeper\",\"exe\":\"sleeper\","
			       "\"samples\":1,\"value\":10101010}]}\n");
	buf__free(&r.body);

	/* A range of wall-clock time: the same processes, the last minute's. */
	{
		char path[128];
		long now = (long)time(NULL);

		snprintf(path, sizeof(path), "/api/v1/processes?start=%ld&end=%ld", now - 60,
			 now + 1);
		CHECK(!get(&r, "", path));
		CHECK_EQ(r.status, 200);
		CHECK(strstr(r.body.data, "{\"pid\":20,\"comm\":\"busy\",\"exe\":\"busy\","
					  "\"samples\":40,\"value\":40}") != NULL);
		buf__free(&r.body);
		snprintf(path, sizeof(path), "/api/v1/processes?start=%ld&seconds=5", now - 60);
		CHECK(!get(&r, "", path));
		CHECK_EQ(r.status, 400);
		buf__free(&r.body);
	}

	/* heap's processes are those that allocated over the retention. */
	CHECK(!get(&r, "", "/api/v1/processes?type=heap"));
	CHECK_EQ(r.status, 200);
	CHECK_STR(r.body.data, "{\"type\":\"heap\",\"seconds\":60,\"unit\":\"bytes\","
			       "\"processes\":[]}\n");
	buf__free(&r.body);
}

TEST(processes_bad_parameters)
{
	static const char *const bad[][2] = {
		{ "type=nope", "type: \"nope\" is not a profile type" },
		{ "type=", "type: \"\" is not a profile type" },
		{ "seconds=0", "seconds: \"0\" is not a positive whole number" },
		{ "seconds=-1", "seconds: \"-1\" is not a positive whole number" },
		{ "seconds=1.5", "seconds: \"1.5\" is not a positive whole number" },
		{ "seconds=99999999999999999999", "is not a positive whole number" },
		{ "seconds=61", "seconds: 61 is beyond the retention of 60 s" },
	};
	struct reply r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!get(&r, "", "/api/v1/processes?%s", bad[i][0]));
		if (r.status != 400 || !strstr(r.body.data, bad[i][1]))
			FAILF("%s: HTTP %d %s", bad[i][0], r.status, r.body.data);
		buf__free(&r.body);
	}
}

int main(void)
{
	log__set_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_ERROR);
	RUN(start);
	RUN(page_for_browsers_only);
	RUN(page_gzipped_when_accepted);
	RUN(profiles_list);
	RUN(processes_summed_per_pid);
	RUN(processes_bad_parameters);
	http_server__stop(srv);
	store__free(d.ctx.store);
	dso__put(app);
	return test_summary();
}
