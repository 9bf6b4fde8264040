/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DSO_PRIV_H
#define AUTOPROF_DSO_PRIV_H

/* struct dso's layout, for the symbolizer only: everything else uses dso.h's accessors. */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/dso.h"

struct objsym;
struct perf_map;
struct ino_alias;

struct dso {
	int refcnt; /* atomic */
	uint32_t id;
	enum dso_kind kind;
	char *path;
	char build_id[81];
	/* Open handle to the file, valid after the mapping process is gone (or -1). */
	int fd;
	/* Its separate debug file (build-id or .gnu_debuglink), found while the process lived. */
	int debug_fd;
	dev_t dev;
	uint64_t ino;
	/* The file's change time and size when it was opened: a file rewritten in place (same
	 * inode: `cp` over it once nothing executes it) is then told from what was loaded. */
	int64_t ctime_ns, size;
	/* Loaded lazily by the symbolizer, under its lock; NULL until then or after eviction. */
	struct objsym *syms;
	/* DSO_ANON of one process: its JIT perf map, reloaded when the file changes (size and
	 * mtime: perf_map_version), unless final (loaded as its process exited). */
	int pid;
	/* Its name in the process's root, then in the host's (after the process is gone). */
	char *perf_map_paths[2];
	uid_t perf_map_uid; /* the process's euid: a map owned by another user is refused */
	struct perf_map *perf_map;
	int64_t perf_map_version;
	bool perf_map_final;
	int load_error;	/* negative errno of the last failed load, 0 otherwise */
	uint64_t last_used; /* symbolizer's lookup clock, for LRU eviction of elf */
	struct dso *next_ino;	/* symbolizer's (dev, ino) index chain */
	struct dso *next_bid;	/* symbolizer's build-id index chain */
	struct ino_alias *aliases; /* other files with its build ID, found by theirs (symbolizer) */
	bool indexed;
};

/* Creates a dso with one reference. path is copied; fd is owned by the dso (may be -1). */
struct dso *dso__new(enum dso_kind kind, const char *path, int fd);

#endif
