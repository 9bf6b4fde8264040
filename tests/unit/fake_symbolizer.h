/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_FAKE_SYMBOLIZER_H
#define AUTOPROF_FAKE_SYMBOLIZER_H

#include <stdint.h>

#include "symbolize/dso.h"

/*
 * A test double for dso.c and symbolizer.c: dsos are plain records, and a frame resolves to the
 * lines registered for its exact (dso, addr), in registration order (inlined callee first), or
 * else to "basename+0xaddr" with no file, as the real symbolizer's fallback does.
 */

/* Returns a dso holding one reference (drop it with dso__put), or NULL. build_id NULL = "". */
struct dso *fake_dso__new(enum dso_kind kind, const char *path, const char *build_id);
/* Adds one line to what (dso, addr) resolves to. system_name NULL = function. 0 or -errno. */
int fake_dso__add_line(struct dso *dso, uint64_t addr, const char *function,
		       const char *system_name, const char *file, uint32_t line);
/* How many times symbolizer__frame ran, and how many fake dsos are still alive. */
unsigned long fake_symbolizer__calls(void);
unsigned long fake_dso__live(void);
/* Makes symbolizer__frame fail with -ENOMEM once it has succeeded n more times; -1 = never. */
void fake_symbolizer__fail_after(long n);

#endif
