/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_SAMPLE_INTERVAL_H
#define AUTOPROF_SAMPLE_INTERVAL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A span of time (an off-CPU wait) valued by its length is stored in the one-second slots it
 * covers, each slot getting the part inside it: a window of whole slots then holds exactly the
 * time the span spent inside the window, however long the span, and the parts add up to the
 * span (nothing lost at window edges, nothing counted twice).
 *
 * fn gets each part of [start_ns, end_ns) cut at whole seconds, oldest first: where it starts
 * (the time to store it at), its length, and whether it is the last (the second the span
 * ended in, which carries the span's count). Parts before floor_ns (older than anything kept)
 * are skipped; an empty span is one part of length 0. Returns 0 or the first non-zero fn
 * result, which stops the walk.
 */
typedef int (*interval_part_fn)(void *arg, uint64_t start_ns, uint64_t ns, bool last);
int interval__split(uint64_t start_ns, uint64_t end_ns, uint64_t floor_ns, interval_part_fn fn,
		void *arg);

#endif
