/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROBES_PROBESPEC_H
#define AUTOPROF_PROBES_PROBESPEC_H

/*
 * What a latency probe request says (the API's JSON, the config's short form), apart from BPF
 * so that it is unit tested.
 */
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define PROBE_NAME_MAX	   128
#define PROBE_PATH_MAX	   4096
#define PROBE_FUNCTION_MAX 256
#define PROBE_LOCATION_MAX 512
#define PROBE_CAPTURE_MAX  128
#define PROBE_CAPTURES_MAX 4 /* bpf/probes_abi.h: PROBES_MAX_CAPTURES */

/* A probe as asked for. */
struct probe_spec {
	char binary[PROBE_PATH_MAX];
	char function[PROBE_FUNCTION_MAX]; /* "" with a location */
	char location[PROBE_LOCATION_MAX]; /* "file.c:LINE", "" with a function */
	uint32_t pid;			   /* 0: every process running the binary */
	char name[PROBE_NAME_MAX];	   /* default: the function or the location */
	uint64_t threshold_ns;		   /* 0: the probe's current p95 */
	uint32_t inside;		   /* narrowed to calls of this probe, 0: none */
	enum store_latency inside_latency; /* with inside: which of its calls */
	/* Variables read at the probe: NAME, NAME->MEMBER, NAME.MEMBER, chained */
	char capture[PROBE_CAPTURES_MAX][PROBE_CAPTURE_MAX];
	uint32_t nr_captures;
};

/*
 * Parses a request body: {"binary": PATH, "function": SYM} or {"binary": PATH, "location":
 * "file.c:LINE"}, optional "pid": N, "name": STR, "threshold": "5ms" (a duration: ns, us, ms,
 * s, m), "inside": {"probe": ID, "latency": "slow"|"fast"|"any"}, "capture": ["len", "r->id"]
 * (at most PROBE_CAPTURES_MAX; a name, then members through pointers "->" or of structs ".").
 * Returns 0, or -EINVAL with a reason in why.
 */
int probespec__parse(const char *body, struct probe_spec *out, char *why, size_t why_len);
/*
 * The config's form of one probe: BINARY:FUNCTION or BINARY:FILE:LINE (BINARY an absolute
 * path). Returns 0, or -EINVAL with a reason in why.
 */
int probespec__parse_short(const char *s, size_t len, struct probe_spec *out, char *why,
			   size_t why_len);
/* The file and line of a location "file.c:LINE"; -EINVAL when it is not one. */
int probespec__location(const char *loc, char *file, size_t file_len, unsigned int *line);
/* "5ms", "250us", "1.5s", "100ns": nanoseconds (> 0). -EINVAL when it is not a duration. */
int probespec__duration(const char *s, uint64_t *ns);
/*
 * Whether expr is a capture: an identifier then "->" or "." and an identifier, at most
 * PROBE_MEMBERS_MAX times. 0 or -EINVAL.
 */
#define PROBE_MEMBERS_MAX 3
int probespec__capture(const char *expr);

#endif
