/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PERFMAP_H
#define AUTOPROF_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Symbols of JIT-compiled code from a perf map (/tmp/perf-PID.map), the text format that V8
 * (node --perf-basic-prof), the JVM agents, .NET and others write: one "START SIZE name" line per
 * code blob, START and SIZE in hex. Addresses are absolute process addresses.
 */
struct perf_map;

/*
 * Parses the perf map at path (the caller passes /proc/PID/root/tmp/perf-PID.map so that the
 * process's own mount namespace is used). Where entries overlap, the later line wins: JITs
 * append, and re-emit code at addresses freed by earlier blobs. Malformed lines are skipped, and
 * so are lines longer than 64 KiB. Reading stops, with a warning, after 1,000,000 entries or
 * 256 MiB. Returns 0 or a negative
 * errno (-ENOENT when there is no file).
 */
int perf_map__load(const char *path, struct perf_map **out);
/* The same, for name under the directory dirfd (AT_FDCWD: as perf_map__load). */
int perf_map__load_at(int dirfd, const char *name, struct perf_map **out);
void perf_map__free(struct perf_map *pm);	/* accepts NULL */

/* The symbol containing addr (name owned by pm) and its *start, or NULL. start may be NULL. */
const char *perf_map__lookup(const struct perf_map *pm, uint64_t addr, uint64_t *start);
/* Distinct address ranges after overlaps are resolved. */
size_t perf_map__nr_ranges(const struct perf_map *pm);
/* Heap bytes held, for the cache budget. */
size_t perf_map__bytes(const struct perf_map *pm);

/*
 * What a JIT's symbol says, for users: the function, its source file and line where the name
 * carries them. Pointers into the raw name (not NUL-terminated: use the lengths).
 */
struct jit_name {
	const char *function;
	size_t function_len;
	const char *file; /* NULL when the name has none */
	size_t file_len;
	uint32_t line;	  /* 0 when unknown */
};

/*
 * Splits the names the runtimes write:
 *  - V8 (node --perf-basic-prof): "KIND:MARKname file:line:col" where KIND is JS, LazyCompile,
 *    Function, Script or Eval and MARK the tier (~ interpreted, ^ baseline, + maglev,
 *    * optimized; none): function "name" ("(anonymous)" when empty), file and line;
 *  - HotSpot (jcmd Compiler.perfmap): "RETURN_TYPE pkg.Class.method(ARGS)": "pkg.Class.method";
 *  - anything else (V8 builtins, HotSpot stubs such as "Interpreter", other JITs): the name whole.
 */
void jit_name__split(const char *name, struct jit_name *out);

#endif
