/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PPROF_H
#define AUTOPROF_PPROF_H

#include "lib/buf.h"

struct store_result;
struct symbolizer;

/*
 * Encodes a query result as a gzip-compressed pprof profile.proto into out (appended).
 * Sample types, period type and default sample type come from the profile type's table row.
 * Each row becomes a Sample with labels pid, tid, comm, exe (strings); each distinct frame a
 * Location; each dso a Mapping (file name, build ID). Returns 0 or a negative errno.
 */
int pprof__encode(const struct store_result *res, struct symbolizer *sym, struct buf *out);

/*
 * Collapsed stacks: one line per unique (exe, stack): "exe;root;...;leaf count" where count is
 * values[0] summed. Inlined frames expand to their own elements, caller first.
 */
int folded__encode(const struct store_result *res, struct symbolizer *sym, struct buf *out);

#endif
