/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_RUNTIME_PYTHON_H
#define AUTOPROF_RUNTIME_PYTHON_H

/*
 * CPython frames (3.10 to 3.13). For each process whose executable or libpython defines
 * _PyRuntime, the interpreter's version (Py_Version, else the file's name) picks a row of struct
 * offsets, written into the BPF map python_procs: the sampler then walks the sampled thread's
 * frame chain (bpf/python.bpf.h) and sends (code object, instruction) pairs. Here they are named
 * from the process's memory (qualified name, file, line from the line table; code objects cached
 * per process) and replace the _PyEval_EvalFrameDefault native frames they ran in.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/frame.h"

struct collect_ctx;
struct proc;
struct python;

/* ctx's python_fd, symbolizer and unwinder are used; NULL with errno set. */
struct python *python__new(struct collect_ctx *ctx);
void python__free(struct python *py); /* accepts NULL */

struct proctab;
/*
 * Listens to processes' lives (proc/proctab.h): once per version of a process's mappings it
 * learns whether it is CPython, which version, and tells the samplers' BPF; an exec or exit
 * forgets it. py may be NULL (Python frames off): then nothing is registered.
 */
int python__observe(struct python *py, struct proctab *pt);
/* Forgets processes that are gone without their exit seen (a full ring buffer). */
void python__sweep(struct python *py);

/*
 * The user frames user[0, n) (leaf first) with each _PyEval_EvalFrameDefault frame replaced by
 * the Python frames it ran, from the sample's pairs[0, 2 * np) (bpf/python_abi.h), into out (room for
 * cap). Frames that cannot be named leave the native frame in place. truncated: the native walk
 * stopped short, and Python frames of evaluation loops it did not reach follow the native ones.
 * Returns the frames written.
 */
uint32_t python__splice(struct python *py, uint32_t pid, const struct frame *user, uint32_t n,
			bool truncated, const uint64_t *pairs, uint32_t np, struct frame *out,
			uint32_t cap);

struct python_stats {
	uint64_t supported;	   /* processes walked: a known version */
	uint64_t unknown_version;  /* CPython of a version without offsets: native frames only */
	uint64_t errors;	   /* CPython whose binary could not be read */
	uint64_t samples;	   /* samples with Python frames */
	uint64_t frames;	   /* Python frames named */
	uint64_t code_errors;	   /* code objects that could not be read (frame left native) */
	uint64_t mismatches;	   /* samples whose Python and evaluation-loop frames disagreed
				    * (a complete native stack with more or fewer loops) */
	uint64_t code_cache_bytes; /* code objects' names and line tables held, all processes */
	uint64_t code_cache_max_bytes; /* past which every cache starts over */
	uint64_t code_cache_flushes;   /* times they did */
};
void python__stats(struct python *py, struct python_stats *out);

/* The line of code unit idx in a line table (3.10's co_linetable, or the 3.11+ locations
 * table), or first_line when the table has none for it. For unit tests. */
uint32_t python__line_310(const uint8_t *t, uint32_t len, uint32_t first_line, uint32_t idx);
uint32_t python__line_311(const uint8_t *t, uint32_t len, uint32_t first_line, uint32_t idx);

/*
 * What python__splice reads of one pair, for the fuzz target (fuzz/fuzz_pyframes.c): the code
 * object at code of a process whose memory mem_fd reads (pread at the address; the caller's fd),
 * as CPython version (major << 8 | minor) lays it out, &PyCode_Type at code_type. *name and
 * *file (malloc'd, the caller frees them) and *line of instruction instr. 0, -ENOTSUP (a
 * version without offsets), -EIO (unreadable) or -EINVAL (not a code object).
 */
int python__read_code(int mem_fd, uint32_t version, uint64_t code_type, uint64_t code,
		      uint64_t instr, char **name, char **file, uint32_t *line);

/* One offset of the table, named as CPython's DWARF names it (for tests/unit/test_python.c). */
struct python_field {
	const char *type;   /* struct tag or typedef: "_ts", "PyCodeObject" */
	const char *member; /* member path ("interpreters.head"), or "" for the type's size */
	uint32_t offset;
};
/* The table's offsets for version (major << 8 | minor) into out; the count, 0 if unknown. */
size_t python__fields(uint32_t version, struct python_field *out, size_t cap);

#endif
