/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_SYMBOLIZER_H
#define AUTOPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize/dso.h"
#include "symbolize/frame.h"

struct strtab;
struct symbolizer;

#define SYM_MAX_LINES 8

/* One source position of a frame. Strings are indices into the caller's strtab (0 = ""). */
struct sym_line {
	uint32_t function;	/* name shown to users (demangled when the symbolizer can) */
	uint32_t system_name;	/* raw symbol name */
	uint32_t file;		/* source file; 0 ("") when unknown, "[module]" for kernel modules */
	uint32_t line;		/* 0 when unknown */
	uint64_t sym_start;	/* start of the function in the frame's address space, 0 if unknown */
};

/* What one frame resolves to: inlined callees first, the real (outermost) function last. */
struct sym_frame {
	uint32_t nr_lines;	/* >= 1 */
	int resolved;		/* 1 when a symbol was found; 0 for the "dso+0xoff" fallback */
	struct sym_line lines[SYM_MAX_LINES];
};

struct map_entry;

struct symbolizer_opts {
	uint64_t cache_bytes;	/* budget for loaded symbol tables */
	uint64_t dwarf_idle_ns;	/* a DWARF reader unused this long lets libdw go; 0: a minute */
	const char *kallsyms_path;	/* NULL: /proc/kallsyms */
};

/* Returns NULL with errno set. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *sym);	/* accepts NULL */

/*
 * Names a frame. Never fails: a frame that cannot be named gets "path+0xoffset" (e.g.
 * "libfoo.so+0x1234") or, with no mapping, "0xaddr". Thread-safe. Returns -ENOMEM only when
 * interning into st fails.
 */
int symbolizer__frame(struct symbolizer *sym, const struct frame *f, struct strtab *st,
		      struct sym_frame *out);

/*
 * The dso for an executable mapping of a live process: shared with every other process mapping
 * the same file (same device and inode, or same build ID). The file is opened through
 * /proc/PID/map_files (deleted files, other mount namespaces) or /proc/PID/root. Returns a new
 * reference the caller puts, or NULL for a non-executable mapping.
 */
struct dso *symbolizer__dso_for_mapping(struct symbolizer *sym, int pid,
					 const struct map_entry *e);
/*
 * The dso already made for the file of device major:minor and inode ino, or NULL: for the
 * mappings of a process gone (no file to open through it), with no check that the file was
 * not rewritten since. Returns a new reference the caller puts.
 */
struct dso *symbolizer__dso_by_inode(struct symbolizer *sym, uint32_t major, uint32_t minor,
				      uint64_t ino);
/*
 * A new dso for the anonymous executable memory (JIT code) of one process, named through its
 * /tmp/perf-PID.map. The caller owns the reference.
 */
struct dso *symbolizer__jit_dso(struct symbolizer *sym, int pid);
/*
 * Loads the perf map name under dirfd into the JIT dso now, for good: its process is exiting and
 * the file is about to be removed, but stored frames still need its names. Takes the lookup lock
 * briefly (not for the read); for threads other than ingest. Returns 0 or a negative errno.
 */
int symbolizer__jit_preload(struct symbolizer *sym, struct dso *dso, int dirfd, const char *name);
/* Singletons, borrowed (the symbolizer keeps them alive): kernel, and addresses in no mapping. */
struct dso *symbolizer__kernel_dso(struct symbolizer *sym);
struct dso *symbolizer__unknown_dso(struct symbolizer *sym);
/* The outermost frame of a user stack that does not reach its root in code, named for why. */
enum sym_marker {
	SYM_MARKER_NONE = 0,
	SYM_MARKER_TRUNCATED, /* "[truncated]": the walk stopped short of the stack's root */
	SYM_MARKER_EXEC,      /* "[exec]": in execve, past the old image's end: no user stack */
	SYM_MARKER_EXITED,    /* "[exiting]": in exit, past the release of its memory */
	SYM_MARKER__MAX,
};
/* The marker's dso (borrowed; NULL for SYM_MARKER_NONE): every frame of it names the marker. */
struct dso *symbolizer__marker_dso(struct symbolizer *sym, enum sym_marker m);
/* Whether a mapping of that path is code the kernel provides ([vdso], [uprobes], [vsyscall]),
 * not a process's anonymous (JIT) code. */
bool symbolizer__kernel_page(const char *path);

/*
 * A frame of interpreted code (a Python function at a line): (function, file, line) is interned
 * for the symbolizer's lifetime and the frame (dso "[python]", borrowed) names it. Thread-safe.
 * Returns 0, -ENOMEM, or -ENOSPC once SYM_MAX_INTERP distinct positions are held.
 */
#define SYM_MAX_INTERP (1u << 18)
int symbolizer__interp_frame(struct symbolizer *sym, const char *function, const char *file,
			     uint32_t line, struct frame *out);
/* The same for the interpreted code of kind (DSO_PYTHON, DSO_LUA, DSO_JAVA): its frame's dso
 * is that runtime's ("[python]", "[lua]", "[java]"), which exporters type the frame by. */
int symbolizer__runtime_frame(struct symbolizer *sym, enum dso_kind kind, const char *function,
			      const char *file, uint32_t line, struct frame *out);

/*
 * Frames read back from disk (src/history/), named as they were when written: a dso for the
 * frames of one mapping path (the caller owns the reference), and a frame of it at (function,
 * file, line), interned in the table interpreted frames use (same bounds and errors; the frame
 * borrows stored).
 */
struct dso *symbolizer__stored_dso(const char *mapping);
int symbolizer__stored_frame(struct symbolizer *sym, struct dso *stored, const char *function,
			     const char *file, uint32_t line, struct frame *out);

/* Forgets dsos nobody references and evicts symbol tables beyond the budget (LRU); the
 * eviction waits for a later call while a lookup holds the tables. */
void symbolizer__trim(struct symbolizer *sym);
/*
 * Copies a step more of each DWARF being copied whole (what symbolizer__trim does at its
 * sweeps), for the ingest thread to call every 100 ms while symbolizer__copying says so: a
 * copy then takes seconds of the moment a file was first needed, not minutes of ten-second
 * sweeps (glibc's: 15 steps, each re-inflating libdw every 50,000 rows). Never waits for a
 * lock a lookup holds.
 */
void symbolizer__copy_step(struct symbolizer *sym);
bool symbolizer__copying(struct symbolizer *sym);

struct symbolizer_stats {
	uint64_t lookups_hit;	  /* frame named from a symbol table */
	uint64_t lookups_miss;	  /* table loaded, no symbol covers the address */
	uint64_t lookups_failed;  /* no table could be loaded for the frame's object */
	uint64_t loads;		  /* symbol tables loaded */
	uint64_t load_errors;	  /* of which failed: */
	uint64_t load_errors_unreadable; /* the file could not be opened while mapped */
	uint64_t load_errors_not_elf;	 /* not an ELF file, or a corrupt one */
	uint64_t load_errors_too_large;	 /* over a size budget: the whole file, or one of its
					  * sources (loads and load_errors count that one too) */
	uint64_t opens;		  /* mapped files opened (once a file, while it stays known) */
	uint64_t open_errors;	  /* a mapped file could not be opened */
	uint64_t files_rewritten; /* a file found rewritten in place since it was read: read anew */
	uint64_t evictions;	  /* symbol tables dropped for the memory budget */
	uint64_t dwarf_releases;  /* DWARF readers let go: after a whole copy, or idle */
	uint64_t dwarf_reopens;	  /* and opened again for a CU not read before */
	uint64_t bytes;		  /* bytes held by loaded symbol tables */
	uint64_t dsos;		  /* objects known */
	uint64_t interp_frames;	  /* distinct interpreted positions (function, file, line) */
};
void symbolizer__stats(struct symbolizer *sym, struct symbolizer_stats *out);

#endif
