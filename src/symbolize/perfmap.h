/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PERFMAP_H
#define AUTOPROF_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Symbols of JIT-compiled code from a perf map (/tmp/perf-PID.map), the text format that V8
 * (node --perf-basic-prof), the JVM agents, .NET and others write: one "START SIZE name" line per
 * code blob, START and SIZE in hex. Addresses are absolute process addresses.
 */
struct perf_map;

/*
 * A perf map is written by the process, in a /tmp every user (or the container) controls: it
 * is opened as ufile.h says, inside rootfd (the process's root: /proc/PID/root, or its /tmp),
 * never through a symlink, only when owned by owner (the process's effective uid) or root (what
 * Linux perf asks too), and only a regular file (a FIFO neither blocks the open nor the read).
 * Returns the fd or a negative errno (-ENOENT when there is none); st gets its fstat.
 */
int perf_map__open(int rootfd, const char *name, uid_t owner, struct stat *st);
/*
 * Parses the perf map open at fd (st: its fstat at open; name: for messages). Where entries
 * overlap, the later line wins: JITs append, and re-emit code at addresses freed by earlier
 * blobs. Malformed lines are skipped, and so are lines over 64 KiB (counted). Reading stops at
 * the size the file had when opened, and, with a warning, after 1,000,000 entries or 256 MiB:
 * bounded in time and memory whatever the file holds. Returns 0 or a negative errno.
 */
int perf_map__read(int fd, const char *name, const struct stat *st, struct perf_map **out);
/* perf_map__open and perf_map__read. */
int perf_map__load_at(int rootfd, const char *name, uid_t owner, struct perf_map **out);
/* The same for a host path owned by root (tools and tests). */
int perf_map__load(const char *path, struct perf_map **out);
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
