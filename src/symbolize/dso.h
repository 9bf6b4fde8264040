/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DSO_H
#define AUTOPROF_DSO_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A dso is one object that code runs from: an ELF file (executable or shared library), the
 * kernel, the vDSO, or anonymous memory (JIT). dsos are reference counted and shared by every
 * process that maps the same file (found by device+inode, or by GNU build ID for the same
 * file under another inode, e.g. in another container). A file can be rewritten in place (same
 * inode) once no process executes it, and stored frames keep its dso for the retention: a dso
 * found by inode is used only if its file's ctime and size are those it was read with.
 */
struct dso;

enum dso_kind {
	DSO_ELF = 0,
	DSO_KERNEL,
	DSO_VDSO,
	DSO_ANON,	/* anonymous executable memory, e.g. JIT code */
	DSO_UNKNOWN,	/* address outside every known mapping */
	DSO_MARKER,	/* a frame that says how a user stack ends where no code does: its path
			 * is its name (symbolizer__marker_dso) */
	DSO_PYTHON,	/* interpreted CPython code: addr indexes the symbolizer's (function, file,
			 * line) table */
	DSO_SPECIAL,	/* a code page the kernel maps into processes ([uprobes]: the uprobe
			 * trampolines; [vsyscall]), every address named by its path */
	DSO_STORED,	/* a frame read back from history on disk, named when it was written:
			 * addr indexes the (function, file, line) table as DSO_PYTHON's does, the
			 * path is the mapping's */
	DSO_LUA,	/* interpreted Lua code, named as DSO_PYTHON's is */
	DSO_JAVA,	/* a Java frame named by the JVM's own structures (an allocated class),
			 * named as DSO_PYTHON's is */
};

enum dso_kind dso__kind(const struct dso *dso);
/* The path the process mapped it at, or "[kernel.kallsyms]", "[vdso]", "[anon]", "[unknown]",
 * "[truncated]", "[python]", "[lua]", "[java]", "[uprobes]", "[vsyscall]". */
const char *dso__path(const struct dso *dso);
/* Lower-case hex GNU build ID, "" when the file has none. */
const char *dso__build_id(const struct dso *dso);
/* A short stable id (>= 1) for this dso, unique for the process lifetime of autoprof. */
uint32_t dso__id(const struct dso *dso);

/* The open file behind an ELF or vDSO dso (borrowed: valid while the dso is), or -1. */
int dso__fd(const struct dso *dso);

/*
 * What tells an ELF dso's file contents from any other: device, inode, and the change time and
 * size it had when opened (a file rewritten in place gets a new dso). -ENOENT for other kinds
 * and for a file whose change time is unknown.
 */
struct dso_file_key {
	uint64_t dev, ino;
	int64_t ctime_ns, size;
};
int dso__file_key(const struct dso *dso, struct dso_file_key *key);

struct dso *dso__get(struct dso *dso);
void dso__put(struct dso *dso);	/* accepts NULL */

#endif
