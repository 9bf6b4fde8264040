/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_OTLP_H
#define AUTOPROF_OTLP_H

#include <stddef.h>

#include "lib/buf.h"

struct store_result;
struct symbolizer;

/* What describes this host in every request. */
struct otlp_host {
	const char *host_name;	   /* resource attribute host.name */
	const char *scope_version; /* InstrumentationScope {name "autoprof", version} */
};

/*
 * Encodes query results of the same window (one per profile type) as one OTLP
 * ExportProfilesServiceRequest (opentelemetry-proto v1.10/v1.11, package
 * opentelemetry.proto.profiles.v1development), uncompressed protobuf appended to out.
 *
 * - One ResourceProfiles per process (rows grouped by pid) with resource attributes host.name,
 *   process.pid, process.executable.name, process.executable.path and container.id (when
 *   known); one ScopeProfiles; one Profile per sample type of each result's profile type (a
 *   cpu result gives samples/count and cpu/nanoseconds), period type and period from the result.
 * - One shared ProfilesDictionary: every table starts with its zero value at index 0; stacks,
 *   locations (one Line per inlined frame, innermost first), functions, mappings (with the
 *   attribute process.executable.build_id.gnu) and attributes deduplicated. Locations carry
 *   profile.frame.type ("kernel" or "native").
 * - Samples carry thread.name and thread.id attributes; samples of the same identity
 *   {stack, attributes, link} are merged.
 * Returns 0 or a negative errno.
 */
int otlp__encode(const struct store_result *const *results, size_t nr_results,
		 struct symbolizer *sym, const struct otlp_host *host, struct buf *out);

#endif
