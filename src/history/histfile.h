/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_HISTORY_HISTFILE_H
#define AUTOPROF_HISTORY_HISTFILE_H

/*
 * The on-disk format of profile history (docs/architecture.md, "History on disk"): a file is a
 * sequence of records, one per profile type and flush. Each record adds to the file's
 * dictionary (strings, locations, stack nodes) what its rows need that earlier records did not
 * define, then its rows. A record is checked by two CRCs (its header with the summary, its
 * body); a reader stops at the first bad or short one: what follows cannot be decoded without
 * it. It knows nothing of the store, the symbolizer or files' names.
 *
 *   header  (HISTFILE_HDR_SIZE bytes, little-endian, struct histfile_hdr)
 *   summary (nr_summary x struct histfile_summary: the top processes, pid 0 = the rest)
 *   dict    (zlib: varints) strings, locations (mapping, function, file, line), nodes
 *           (parent node + 1 or 0 for a root, location)
 *   rows    (zlib: varints) node + 1 (0: no frames), pid, tid, comm, exe, exe_path,
 *           container, service, gpu_api, gpu, values[nr_values]
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

#define HISTFILE_MAGIC 0x31485041u /* "APH1" */
#define HISTFILE_HDR_SIZE 96
#define HISTFILE_SUMMARY_MAX 9	/* the top 8 processes and the rest */
#define HISTFILE_SUMMARY_SIZE 52 /* an entry on disk: pid, exe[16], 4 values */
/* A record's header and summary at their longest: what a reader of headers reads at once. */
#define HISTFILE_HEAD_MAX (HISTFILE_HDR_SIZE + HISTFILE_SUMMARY_MAX * HISTFILE_SUMMARY_SIZE)
#define HISTFILE_MAX_VALUES 4
#define HISTFILE_MAX_PART (64u << 20) /* a record's compressed or raw part, at most */

struct histfile_hdr {
	char type[16];	     /* the profile type's name, NUL-padded */
	uint64_t start_ns;   /* CLOCK_REALTIME: the record covers [start_ns, end_ns) */
	uint64_t end_ns;
	uint64_t period;
	uint32_t nr_values;
	uint32_t nr_summary;
	uint32_t dict_zlen, dict_len;
	uint32_t rows_zlen, rows_len;
	uint32_t body_crc; /* read: the CRC the body must have */
};

struct histfile_summary {
	uint32_t pid;	  /* 0: every process not listed */
	char exe[16];	  /* NUL-padded */
	uint64_t values[HISTFILE_MAX_VALUES];
};

/* A row as a record holds it: strings are dictionary ids (0 = ""). */
struct histfile_row {
	uint32_t node;	/* the leaf's stack node + 1, 0 for no frames */
	uint32_t pid, tid;
	uint32_t comm, exe, exe_path, container, service;
	uint32_t gpu_api, gpu;
	uint64_t values[HISTFILE_MAX_VALUES];
};

struct histfile_loc {
	uint32_t mapping, function, file, line;
};

struct histfile_node {
	uint32_t parent; /* the caller's node + 1, 0 for an outermost frame */
	uint32_t loc;
};

/* The bytes of one record, not 0: its own size; for the caller's bounds. */
size_t histfile__record_size(const struct histfile_hdr *h);
/* Where its body (dictionary, then rows) starts, from the record's first byte. */
size_t histfile__body_offset(const struct histfile_hdr *h);

/* ---- writing: one file's dictionary ---- */
struct histfile_writer;

struct histfile_writer *histfile_writer__new(void); /* NULL on ENOMEM */
void histfile_writer__free(struct histfile_writer *w); /* accepts NULL */
/* Ids in the file's dictionary, made as needed: >= 0, or -ENOMEM. */
int64_t histfile_writer__str(struct histfile_writer *w, const char *s);
int64_t histfile_writer__loc(struct histfile_writer *w, const struct histfile_loc *loc);
/* The node of loc called from parent (a node + 1, 0 for none): returns that node + 1. */
int64_t histfile_writer__node(struct histfile_writer *w, uint32_t parent, uint32_t loc);
/*
 * Appends to out one record: h (its lengths are filled in), the summary, what the dictionary
 * gained since the last commit, and rows. Returns 0, -ENOMEM or -EIO (compression).
 */
int histfile_writer__record(struct histfile_writer *w, struct histfile_hdr *h,
			    const struct histfile_summary *summary, const struct histfile_row *rows,
			    size_t nr_rows, struct buf *out);
/* The record reached the file: its dictionary additions are no longer new. */
void histfile_writer__commit(struct histfile_writer *w);

/* ---- reading: records in order, the dictionary growing with them ---- */
struct histfile_reader;

struct histfile_reader *histfile_reader__new(void); /* NULL on ENOMEM */
void histfile_reader__free(struct histfile_reader *r); /* accepts NULL */
/*
 * Reads the header and summary of the record at the start of p (n bytes available): 0, or
 * -EBADMSG for a damaged header and -ENODATA for one cut short (both end the file).
 */
int histfile__parse_hdr(const void *p, size_t n, struct histfile_hdr *h,
			struct histfile_summary summary[HISTFILE_SUMMARY_MAX]);
/*
 * Decodes the body of the record whose header is h, at the start of body (the bytes after the
 * summary, h's dict_zlen + rows_zlen of them): the dictionary grows; with rows, its rows are
 * decoded into the reader (histfile_reader__rows). 0, -EBADMSG (damaged) or -ENOMEM.
 */
int histfile_reader__body(struct histfile_reader *r, const struct histfile_hdr *h,
			  const void *body, bool rows);
const struct histfile_row *histfile_reader__rows(const struct histfile_reader *r, size_t *nr);
/* Dictionary lookups; NULL (or false) for an id it does not hold. */
const char *histfile_reader__str(const struct histfile_reader *r, uint32_t id);
bool histfile_reader__loc(const struct histfile_reader *r, uint32_t id, struct histfile_loc *out);
bool histfile_reader__node(const struct histfile_reader *r, uint32_t id,
			   struct histfile_node *out);

#endif
