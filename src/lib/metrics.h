/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_METRICS_H
#define AUTOPROF_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

/*
 * The exporter's own metrics. Modules register a callback at setup; at scrape time each callback
 * writes its families through the writer, which renders Prometheus text 0.0.4 or OpenMetrics 1.0.
 */
struct metrics_writer;

enum metric_type {
	METRIC_COUNTER,	/* name without _total; the writer adds it */
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

typedef void (*metrics_fn)(struct metrics_writer *w, void *ctx);

/*
 * Returns 0 or -ENOMEM. Callbacks run in registration order, from HTTP threads, one render at a
 * time (the registry lock is held), so a callback must not register or unregister.
 */
int metrics__register(metrics_fn fn, void *ctx);
/* Removes every registration of (fn, ctx); once it returns, fn is not running with that ctx. */
void metrics__unregister(metrics_fn fn, void *ctx);
void metrics__unregister_all(void);

/*
 * Registers the usual exporter process metrics: process_cpu_seconds_total,
 * process_resident_memory_bytes, process_virtual_memory_bytes, process_open_fds,
 * process_max_fds and process_start_time_seconds. Call once. Returns 0 or -ENOMEM.
 */
int metrics__register_process(void);

#define METRICS_CONTENT_TYPE_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_CONTENT_TYPE_OPENMETRICS \
	"application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Starts a family: writes HELP and TYPE. Every sample until the next family belongs to it. */
void metrics__family(struct metrics_writer *w, const char *name, enum metric_type type,
		     const char *help);
/*
 * One sample of the current family. The variadic part is label name/value pairs ending with
 * NULL; values are escaped by the writer. Counters get "_total" appended.
 */
void metrics__sample(struct metrics_writer *w, double value, ...) __attribute__((sentinel));
/* An OpenMetrics exemplar: label name/value pairs (at most 128 UTF-8 characters in all). */
struct metrics_exemplar {
	const char *const *labels; /* name, value, name, value, ... */
	size_t nr_labels;	   /* pairs */
	double value;
	double timestamp; /* seconds since the epoch; 0: none */
};

/* Like metrics__sample, with an exemplar written in OpenMetrics (and dropped in text 0.0.4). */
void metrics__sample_exemplar(struct metrics_writer *w, const struct metrics_exemplar *ex,
			      double value, ...) __attribute__((sentinel));
/* Like metrics__sample with an explicit suffix (histograms: "_bucket", "_sum", "_count"). */
void metrics__sample_suffix(struct metrics_writer *w, const char *suffix, double value, ...)
	__attribute__((sentinel));

/*
 * One whole histogram sample set of the current family: a _bucket per bound (cumulative[i] is the
 * number of observations <= bounds[i], bounds ascending), the +Inf bucket (count), _sum and
 * _count. The variadic part is the label pairs shared by all of them, ending with NULL.
 */
void metrics__histogram(struct metrics_writer *w, const double *bounds,
			const unsigned long long *cumulative, size_t nr_bounds,
			unsigned long long count, double sum, ...) __attribute__((sentinel));

/*
 * Families from a static const table instead of a chain of calls: a family row (METRICS_FAMILY)
 * starts a family, the sample rows (METRICS_SAMPLE) after it are its samples in order, each the
 * value of one field of the struct the table is rendered against. A field's type is taken from
 * the struct; one of a type not listed in enum metrics_field is a compile error.
 */
enum metrics_field {
	METRICS_FIELD_BOOL,
	METRICS_FIELD_UINT,
	METRICS_FIELD_ULONG, /* uint64_t, size_t */
	METRICS_FIELD_ULLONG,
	METRICS_FIELD_DOUBLE,
};

#define METRICS_ROW_LABELS 3 /* label pairs a sample row can hold */

struct metrics_row {
	const char *family; /* a family row: its name, type and help; NULL: a sample row */
	enum metric_type type;
	const char *help;
	const char *labels[2 * METRICS_ROW_LABELS]; /* name, value, ...; a NULL name ends them */
	size_t offset;				    /* of the field in the struct */
	enum metrics_field field;
	/*
	 * The value is the field divided by this (0: the field as it is). A divisor, not a scale:
	 * ns / 1e9 and ns * 1e-9 can differ in the last bit, and so in the text written.
	 */
	double divisor;
};

#define METRICS_FAMILY(name, metric_type, help_text) \
	{ .family = (name), .type = (metric_type), .help = (help_text) }

#define METRICS_FIELD_OF(type, member)                                  \
	_Generic(((type *)0)->member,                                   \
		bool: METRICS_FIELD_BOOL,                               \
		unsigned int: METRICS_FIELD_UINT,                       \
		unsigned long: METRICS_FIELD_ULONG,                     \
		unsigned long long: METRICS_FIELD_ULLONG,               \
		double: METRICS_FIELD_DOUBLE)

/* A sample of (type).member / div; the variadic part is up to METRICS_ROW_LABELS label pairs. */
#define METRICS_SAMPLE_DIV(type, member, div, ...)                                   \
	{                                                                            \
		.labels = { __VA_ARGS__ }, .offset = offsetof(type, member),         \
		.field = METRICS_FIELD_OF(type, member), .divisor = (div),           \
	}
#define METRICS_SAMPLE(type, member, ...) METRICS_SAMPLE_DIV(type, member, 0, __VA_ARGS__)

/* Writes rows[0..nr) with the sample values read from the struct at base. */
void metrics__table(struct metrics_writer *w, const struct metrics_row *rows, size_t nr,
		    const void *base);
#define METRICS_TABLE(w, rows, base) metrics__table(w, rows, sizeof(rows) / sizeof((rows)[0]), base)

/* Formats v as the writer does ("12345", "0.25", "+Inf", "NaN"). Returns dst. */
char *metrics__format_value(char *dst, size_t size, double v);

/*
 * Appends every registered family to out, in OpenMetrics ending with "# EOF". Returns 0 or
 * -ENOMEM (out then holds a partial exposition).
 */
int metrics__render(struct buf *out, bool openmetrics);

#endif
