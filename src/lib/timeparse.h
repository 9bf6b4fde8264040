/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_TIMEPARSE_H
#define AUTOPROF_LIB_TIMEPARSE_H

#include <stdint.h>

/*
 * A point in time as users write it in a query: Unix seconds ("1764120720", "1764120720.5") or
 * RFC 3339 ("2026-11-26T03:12:00Z", "2026-11-26T04:12:00.250+01:00"). Returns 0 and
 * CLOCK_REALTIME nanoseconds, or -EINVAL for anything else (before 1970 or after 2262 too).
 */
int time__parse(const char *s, uint64_t *ns);

#endif
