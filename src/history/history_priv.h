/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_HISTORY_HISTORY_PRIV_H
#define AUTOPROF_HISTORY_HISTORY_PRIV_H

/* struct history's layout and the file chores the writer (history.c) and the readers
 * (history_read.c) share; nothing outside src/history/ includes it. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "history/histfile.h"
#include "history/history.h"
#include "lib/keyindex.h"
#include "symbolize/symbolizer.h"

struct hfile {
	uint64_t id;	   /* its name: <id>.aph, the CLOCK_REALTIME second it was made */
	uint64_t size;	   /* bytes of whole records */
	uint64_t first_ns; /* the span of its records (0, 0: none yet) */
	uint64_t last_ns;
};

/* One frame's locations in a file's dictionary, outermost last (as sym_frame's lines). */
struct frame_locs {
	uint32_t n;
	uint32_t loc[SYM_MAX_LINES];
};

/* Frames already named for the file being written: struct frame -> locs[id]. */
struct frame_memo {
	struct keyindex ki;
	struct frame_locs *locs;
	uint32_t cap;
};

struct history {
	struct history_opts o;
	int dirfd;
	pthread_mutex_t lock; /* the file list, sizes and stats */
	pthread_cond_t cond;
	pthread_t thread;
	bool started, stopping;
	struct hfile *files; /* oldest first */
	uint32_t nr_files;
	uint64_t roll_bytes;
	/* Writer thread only: the file being written and its dictionary. */
	int fd;
	struct histfile_writer *w;
	struct frame_memo memo; /* stable frames named for this file */
	int64_t next_sec; /* CLOCK_MONOTONIC: the first second not written yet */
	/* The last live set written of heap [0] and gpuheap [1] had rows: an empty one is then
	 * written once, so that a set freed since does not pass for live until the next rows. */
	bool live_held[2];
	uint64_t written_until;
	struct history_stats stats;
};

/* Opens file id for reading: a regular file, never through a symlink. fd or -errno. */
int hfile__open(struct history *h, uint64_t id, struct stat *st);
/* A cut or damaged record at off: counted and logged; the caller reads no further. */
void hfile__damaged(struct history *h, uint64_t off, int err);
/*
 * Walks the records of an open file's first size bytes: fn gets each header, its summary and
 * the record's offset, and ends the walk by returning nonzero (returned). A cut or damaged
 * header ends it too, counted. *good gets the bytes of whole records walked.
 */
int hfile__walk(struct history *h, int fd, uint64_t size, uint64_t *good,
		int (*fn)(const struct histfile_hdr *hd, const struct histfile_summary *s,
			  uint64_t off, void *ctx),
		void *ctx);
/* A copy (the caller frees) of the files whose records may overlap [start, end). */
int history__files_in(struct history *h, uint64_t start, uint64_t end, struct hfile **out,
		      uint32_t *nr);

#endif
