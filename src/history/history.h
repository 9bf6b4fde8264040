/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_HISTORY_HISTORY_H
#define AUTOPROF_HISTORY_HISTORY_H

/*
 * Profiles kept on disk (storage.*): every flush interval a thread of its own takes the store's
 * completed seconds of each stored profile type, names their frames, and appends one record a
 * type to the current file of storage.path (histfile.h). Files go when they are older than
 * storage.retention or the directory is over storage.max-bytes, oldest first. Queries read the
 * records of a range back into store rows whose frames are named stored frames.
 *
 * Crash-safety: a record is written with one write at the end of its file; a cut or damaged
 * one ends what is read of that file (counted), and the next start writes a new file.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "store/store.h"

struct history;
struct symbolizer;

struct history_opts {
	const char *path;	/* the directory; made (0700) if missing, its parent must exist */
	uint64_t retention_ns;
	uint64_t max_bytes;
	uint64_t flush_ns;	/* how often the store's new seconds are written */
	struct store *store;	/* borrowed */
	struct symbolizer *sym; /* borrowed */
	/*
	 * The live set of PROFILE_HEAP or PROFILE_GPUHEAP now (rows the history frees with
	 * store_rows__free; none: 0 rows), written at each flush as a snapshot; NULL: none is.
	 * Called on the writer's thread.
	 */
	int (*live_rows)(void *ctx, enum profile_type type, struct store_row **rows, size_t *nr);
	void *live_ctx;
};

/*
 * Opens the directory (refused: a symlink, not owned by this user, writable by others; one
 * another autoprof holds), reads what its files hold, and starts the writer. Returns 0 and the
 * history, or a negative errno with why (a line for the log) filled.
 */
int history__new(const struct history_opts *o, struct history **out, char *why, size_t why_len);
/* Writes the seconds not written yet, stops the writer, closes. Accepts NULL. */
void history__free(struct history *h);

/* Rows read back: store rows (store_rows__free's ownership) and the strings they point to. */
struct history_rows {
	struct store_row *rows;
	size_t nr_rows;
	uint64_t period;
	uint64_t start_ns, end_ns; /* CLOCK_REALTIME span of the records read */
	struct strtab *strings;	   /* exe_path, container_id, service point here */
};

/*
 * The rows of type stored for [start_ns, end_ns) (CLOCK_REALTIME; every record that overlaps
 * the range counts whole) that filter keeps; for PROFILE_HEAP and PROFILE_GPUHEAP, the last
 * snapshot of the live set in the range. A filter on a probe or a trace finds nothing:
 * neither is written. Returns 0 and rows the caller frees with history_rows__free(), or a
 * negative errno.
 */
int history__rows(struct history *h, enum profile_type type, uint64_t start_ns, uint64_t end_ns,
		  const struct store_filter *filter, struct history_rows **out);
void history_rows__free(struct history_rows *hr); /* accepts NULL */
/* Up to when (CLOCK_REALTIME ns) records are written: a query takes later seconds from the
 * store. 0 before the first record. */
uint64_t history__written_until(struct history *h);
/* The oldest CLOCK_REALTIME ns a record holds (0: none). */
uint64_t history__oldest(struct history *h);
uint64_t history__retention_ns(const struct history *h);

/* What a timeline sums: a value index of type per step, overall and for each process. */
struct history_point {
	uint32_t pid;	/* 0: every process not listed on its own */
	char exe[16];
	uint64_t step;	/* index of the step */
	uint64_t value;
};
/*
 * Calls fn for each (step, process) total of value index vi of type's records starting in
 * [start_ns, end_ns), steps of step_ns from start_ns, read from the records' summaries (the
 * top processes of each record, the rest as pid 0). Returns 0 or a negative errno.
 */
int history__timeline(struct history *h, enum profile_type type, unsigned int vi,
		      uint64_t start_ns, uint64_t end_ns, uint64_t step_ns,
		      void (*fn)(const struct history_point *p, void *ctx), void *ctx);

struct history_stats {
	uint64_t files, bytes;
	uint64_t records_written, bytes_written;
	uint64_t write_errors;	   /* records not written (disk full, I/O): profiling goes on */
	uint64_t records_damaged;  /* cut or damaged records met: the rest of their file skipped */
	uint64_t files_removed_retention, files_removed_budget;
	uint64_t records_read;
	uint64_t flush_ns_total;   /* time spent writing, all flushes */
	uint64_t oldest_ns;	   /* CLOCK_REALTIME of the oldest data held, 0: none */
};
void history__stats(struct history *h, struct history_stats *out);

#endif
