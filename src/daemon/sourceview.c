// SPDX-License-Identifier: GPL-2.0-only
/*
 * The web view's source view: one function's samples by line (export/linesum.h), where it is
 * probed from (its binary, its symbol), and the source text around those lines.
 *
 * The text is read from a path the binary's DWARF names, and a profiled program writes its own
 * DWARF: a crafted one could name any file root can read. So the text is served only (1) with
 * the admin API on: whoever may place probes in any binary may read what they name; (2) for a
 * file whose name ends like source code (SOURCE_SUFFIXES), so that /etc/shadow or a key is not
 * one even then; (3) opened as every file a user controls is (lib/ufile.h: inside the
 * process's root, regular, non-blocking, at most SOURCE_MAX_BYTES). Each answer is counted in
 * autoprof_source_reads_total{result}.
 */
#define pr_fmt(fmt) "webui: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/params.h"
#include "daemon/webui.h"
#include "export/linesum.h"
#include "lib/buf.h"
#include "lib/json.h"
#include "lib/ufile.h"
#include "query/query.h"
#include "store/profiles.h"

#define SOURCE_MAX_BYTES (4u << 20)
/* Lines of context around the sampled ones, and the most lines one answer holds. */
#define SOURCE_CONTEXT	 8
#define SOURCE_MAX_LINES 2000
#define FUNCTION_MAX	 4096

static const char *const SOURCE_SUFFIXES[] = {
    ".c",   ".h",   ".cc",  ".cpp", ".cxx",   ".c++", ".hh",  ".hpp",  ".hxx", ".h++",
    ".inl", ".ipp", ".tcc", ".m",   ".mm",    ".s",   ".S",   ".go",   ".rs",  ".zig",
    ".d",   ".f",   ".f90", ".for", ".swift", ".py",  ".lua", ".java", ".kt",  ".scala",
    ".js",  ".mjs", ".ts",  ".nim", ".cu",    ".cuh", ".y",   ".l",
};

static uint64_t source_reads[WEBUI_SOURCE_NR];

void webui__source_stats(uint64_t out[WEBUI_SOURCE_NR])
{
	for (int i = 0; i < WEBUI_SOURCE_NR; i++)
		out[i] = __atomic_load_n(&source_reads[i], __ATOMIC_RELAXED);
}

static void count(enum webui_source_result r)
{
	__atomic_fetch_add(&source_reads[r], 1, __ATOMIC_RELAXED);
}

static bool source_like(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		return false;
	for (size_t i = 0; i < sizeof(SOURCE_SUFFIXES) / sizeof(SOURCE_SUFFIXES[0]); i++)
		if (!strcmp(dot, SOURCE_SUFFIXES[i]))
			return true;
	return false;
}

/*
 * The file's bytes into out, path resolved inside pid's root; inside the host's only when the
 * process is gone (its root no longer opens), never because a container lacks the file.
 */
static int read_source(uint32_t pid, const char *path, struct buf *out)
{
	const struct ufile_how how = {.max_size = SOURCE_MAX_BYTES};
	int root = pid ? ufile__root((int)pid) : -ESRCH, fd;
	struct stat st;
	ssize_t n;

	if (root < 0)
		root = ufile__root(0);
	if (root < 0)
		return root;
	fd = ufile__openat(root, path, &how, &st);
	close(root);
	if (fd < 0)
		return fd;
	if (buf__reserve(out, (size_t)st.st_size + 1)) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, out->data, (size_t)st.st_size, 0);
	if (n < 0 || n != st.st_size) {
		int err = ufile__read_failed(fd, st.st_size);

		close(fd);
		return err;
	}
	close(fd);
	out->len = (size_t)n;
	out->data[n] = '\0';
	return 0;
}

/* One line as a JSON string (json__str: bytes that are not UTF-8 become U+FFFD). */
static json_t *line_str(const char *s, size_t len)
{
	char *copy = strndup(s, len);
	json_t *v;

	if (!copy)
		return NULL;
	v = json__str(copy);
	free(copy);
	return v;
}

/* {"first_line": N, "lines": [...]} of lines [lo, hi] of text (1-based), or NULL. */
static json_t *text_lines(const struct buf *text, uint32_t lo, uint32_t hi)
{
	json_t *lines = json_array();
	const char *p = text->data, *end = text->data + text->len;
	uint32_t n = 1;

	if (!lines)
		return NULL;
	for (; p < end && n <= hi; n++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n >= lo && json_array_append_new(lines, line_str(p, len))) {
			json_decref(lines);
			return NULL;
		}
		p += len + 1;
	}
	return json_pack("{s:I,s:o}", "first_line", (json_int_t)lo, "lines", lines);
}

/* Sets "source" (or "source_error") of o for group g. */
static void add_source(const struct daemon *d, const struct linesum_group *g, json_t *o)
{
	struct buf text = {0};
	uint32_t lo = UINT32_MAX, hi = 0;
	json_t *src = NULL;
	char why[256];
	int err;

	for (size_t i = 0; i < g->nr_lines; i++) {
		if (!g->lines[i].line)
			continue;
		lo = g->lines[i].line < lo ? g->lines[i].line : lo;
		hi = g->lines[i].line > hi ? g->lines[i].line : hi;
	}
	if (!g->file[0] || !hi) {
		snprintf(why, sizeof(why), "no line numbers for this function");
		goto out;
	}
	if (!d->cfg.web_enable_admin_api) {
		count(WEBUI_SOURCE_OFF);
		snprintf(
		    why, sizeof(why),
		    "source text is shown with --web.enable-admin-api only (it reads the files "
		    "that profiled binaries name)");
		goto out;
	}
	if (!source_like(g->file)) {
		count(WEBUI_SOURCE_NOT_SOURCE);
		snprintf(why, sizeof(why), "%s: not named like source code: not read", g->file);
		goto out;
	}
	err = read_source(g->pid, g->file, &text);
	if (err) {
		count(WEBUI_SOURCE_UNREADABLE);
		snprintf(why, sizeof(why), "%s: %s", g->file,
			 err == -EINVAL	 ? "not a regular file"
			 : err == -EFBIG ? "too large"
					 : strerror(-err));
		goto out;
	}
	count(WEBUI_SOURCE_OK);
	lo = lo > SOURCE_CONTEXT ? lo - SOURCE_CONTEXT : 1;
	hi = hi + SOURCE_CONTEXT;
	if (hi - lo >= SOURCE_MAX_LINES)
		hi = lo + SOURCE_MAX_LINES - 1;
	src = text_lines(&text, lo, hi);
	buf__free(&text);
	if (src) {
		json_object_set_new(o, "source", src);
		return;
	}
	snprintf(why, sizeof(why), "out of memory");
out:
	json_object_set_new(o, "source_error", json__str(why));
}

static json_t *group_json(const struct daemon *d, const struct linesum_group *g)
{
	json_t *lines = json_array(), *o;

	for (size_t i = 0; lines && i < g->nr_lines; i++)
		if (json_array_append_new(lines, json_pack("{s:I,s:o,s:o}", "line",
							   (json_int_t)g->lines[i].line, "self",
							   json__u64(g->lines[i].self), "total",
							   json__u64(g->lines[i].total)))) {
			json_decref(lines);
			lines = NULL;
		}
	if (!lines)
		return NULL;
	o = json_pack("{s:o,s:o,s:o,s:o,s:I,s:b,s:o,s:o,s:o}", "binary", json__str(g->binary),
		      "build_id", json__str(g->build_id), "file", json__str(g->file), "symbol",
		      json__str(g->system_name), "pid", (json_int_t)g->pid, "inlined", g->inlined,
		      "self", json__u64(g->self), "total", json__u64(g->total), "lines", lines);
	if (o)
		add_source(d, g, o);
	return o;
}

void webui__source(const struct http_request *req, struct http_response *resp, void *ctx)
{
	struct daemon *d = ctx;
	const char *type = http__query(req, "type"), *fn = http__query(req, "function");
	const char *pid = http__query(req, "pid");
	const struct query_sources src = {.store = d->ctx.store, .history = d->history};
	const struct profile_desc *desc = profile__by_name(type ? type : "cpu");
	const struct linesum_group *groups;
	struct store_filter filter = {0};
	struct query_result *qr = NULL;
	struct linesum *ls = NULL;
	struct query_window w;
	uint32_t pids[MAX_PIDS];
	json_t *list;
	size_t nr = 0;
	int err, v;

	if (!desc || !query__windowed(desc->type)) {
		http__error(resp, 400,
			    "type: \"%s\" is not a windowed profile type (GET /api/v1/profiles)",
			    type);
		return;
	}
	if (!fn || !*fn || strlen(fn) > FUNCTION_MAX) {
		http__error(resp, 400, "function: required, 1 to %d characters", FUNCTION_MAX);
		return;
	}
	if (params__window(d, req, &w, resp))
		return;
	if (pid) {
		if (params__pids(pid, pids, &filter.nr_pids, resp))
			return;
		filter.pids = pids;
	}
	err = query__profile(&src, desc->type, &w, &filter, &qr);
	if (err) {
		http__error(resp, 503, "query failed: %s", strerror(-err));
		return;
	}
	v = desc->default_value < 0 ? 0 : desc->default_value;
	err = linesum__function(query_result__rows(qr), d->ctx.sym, fn, (unsigned int)v, &ls);
	query_result__free(qr);
	if (err) {
		http__error(resp, 500, "out of memory");
		return;
	}
	groups = linesum__groups(ls, &nr);
	if (!nr) {
		linesum__free(ls);
		http__error(resp, 404, "function: no samples of \"%s\" in this window", fn);
		return;
	}
	list = json_array();
	for (size_t i = 0; list && i < nr; i++)
		if (json_array_append_new(list, group_json(d, &groups[i]))) {
			json_decref(list);
			list = NULL;
		}
	resp->content_type = "application/json";
	err = json__writeln(&resp->body,
			    json_pack("{s:o,s:o,s:o,s:o,s:o}", "function", json__str(fn), "type",
				      json__str(desc->name), "unit",
				      json__str(desc->values[v].unit), "profile_total",
				      json__u64(linesum__profile_total(ls)), "locations", list),
			    JSON_COMPACT);
	linesum__free(ls);
	if (err) {
		buf__reset(&resp->body);
		http__error(resp, 500, "out of memory");
	}
}
