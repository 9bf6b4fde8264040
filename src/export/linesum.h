/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_EXPORT_LINESUM_H
#define AUTOPROF_EXPORT_LINESUM_H

/*
 * One function's share of a profile, line by line: what the web view's source view shows and
 * where its "time this function" finds the binary to probe. Frames are named as the folded
 * format names them (export/pprof.h), so a name read off a flame graph finds its frames.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

struct symbolizer;
struct linesum;

struct linesum_line {
	uint32_t line;	/* 0: frames without a line number */
	uint64_t self;	/* of the value: the function's own code at this line was the leaf */
	uint64_t total; /* rows with this line anywhere in their stack, each counted once */
};

/* The function as one binary and one source file have it; strings owned by the linesum. */
struct linesum_group {
	const char *binary;	 /* the mapping's path; "" without one (interpreted code) */
	const char *build_id;	 /* "" when none */
	const char *file;	 /* source file; "" when unknown */
	const char *system_name; /* the symbol (mangled), what a probe on it names */
	uint32_t pid;		 /* the first process seen running it */
	bool inlined;		 /* seen only inlined into other functions: no symbol to probe */
	uint64_t self, total;
	const struct linesum_line *lines; /* ascending by line */
	size_t nr_lines;
};

/*
 * Sums value value_idx of res's rows for the function named name (as the folded format writes
 * it: ';' and line breaks become '_'). Returns 0 and *out (the caller frees it with
 * linesum__free()), or -ENOMEM.
 */
int linesum__function(const struct store_result *res, struct symbolizer *sym, const char *name,
		      unsigned int value_idx, struct linesum **out);
void linesum__free(struct linesum *ls); /* accepts NULL */

/* The groups, most total first; owned by ls. */
const struct linesum_group *linesum__groups(const struct linesum *ls, size_t *nr);
/* The value summed over every row of res. */
uint64_t linesum__profile_total(const struct linesum *ls);

#endif
