/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DAEMON_WEBUI_H
#define AUTOPROF_DAEMON_WEBUI_H

#include <stdbool.h>
#include <stdint.h>

#include "http/http.h"

/*
 * The live web view: one self-contained HTML page (scripts and styles inlined), built from web/
 * by `make` and linked into the binary (webui_page.S), so nothing is read from disk at run time.
 * Binaries built without it (WEBUI=0, or no npm) answer a short page saying so.
 */

/* Whether the request is a browser's: its Accept header lists text/html. */
bool webui__wanted(const struct http_request *req);
/* Whether the page is in this binary. */
bool webui__built(void);
/* The page (gzip when the client accepts it), or the "not built" note. */
void webui__page(const struct http_request *req, struct http_response *resp);

/*
 * JSON for the page. ctx is the struct daemon.
 * GET /api/v1/profiles: the profile-type table, with the unit of each type's folded values and
 * whether its collector runs, and the retention (the longest window).
 * GET /api/v1/processes?type=NAME&seconds=N: the processes with samples of that type in the
 * window, most samples first.
 */
void webui__profiles(const struct http_request *req, struct http_response *resp, void *ctx);
void webui__processes(const struct http_request *req, struct http_response *resp, void *ctx);
/*
 * GET /api/v1/timeline?type=NAME&start=&end=&step=SECONDS&pid=1,2 (timeline.c): the type's
 * totals per step over the range (default: the last hour), overall and for the top 10
 * processes; disk where the history wrote, memory after.
 */
void webui__timeline(const struct http_request *req, struct http_response *resp, void *ctx);
/*
 * GET /api/v1/source?function=NAME&type=NAME&seconds=N|start=&end=&pid=1,2 (sourceview.c): the
 * function's samples by source line in each binary and file it was seen in, its symbol and
 * binary (what a probe on it names), and the source text around those lines where it may be
 * read. 404 when the window has no sample of it.
 */
void webui__source(const struct http_request *req, struct http_response *resp, void *ctx);

/* What the source view answered about source text, for autoprof_source_reads_total. */
enum webui_source_result {
	WEBUI_SOURCE_OK,
	WEBUI_SOURCE_OFF,	 /* the admin API is off */
	WEBUI_SOURCE_NOT_SOURCE, /* the file is not named like source code */
	WEBUI_SOURCE_UNREADABLE, /* missing, refused (lib/ufile.h) or failed while read */
	WEBUI_SOURCE_NR,
};
void webui__source_stats(uint64_t out[WEBUI_SOURCE_NR]);

#endif
