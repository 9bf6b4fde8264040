// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "metrics: " fmt

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/metrics.h"

#define NAME_MAX_LEN 200

struct metrics_writer {
	struct buf *out;
	bool openmetrics;
	bool in_family;
	enum metric_type type;
	char name[NAME_MAX_LEN];
	int err;
};

struct registration {
	metrics_fn fn;
	void *ctx;
};

/* Held for a whole render too: callbacks then never run concurrently with each other. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct registration *registry;
static size_t registry_len;
static size_t registry_cap;

int metrics__register(metrics_fn fn, void *ctx)
{
	int ret = 0;

	pthread_mutex_lock(&registry_lock);
	if (registry_len == registry_cap) {
		size_t cap = registry_cap ? registry_cap * 2 : 8;
		struct registration *r = realloc(registry, cap * sizeof(*r));

		if (!r) {
			ret = -ENOMEM;
			goto unlock;
		}
		registry = r;
		registry_cap = cap;
	}
	registry[registry_len].fn = fn;
	registry[registry_len].ctx = ctx;
	registry_len++;
unlock:
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

void metrics__unregister(metrics_fn fn, void *ctx)
{
	size_t i, j = 0;

	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < registry_len; i++) {
		if (registry[i].fn == fn && registry[i].ctx == ctx)
			continue;
		registry[j++] = registry[i];
	}
	registry_len = j;
	pthread_mutex_unlock(&registry_lock);
}

void metrics__unregister_all(void)
{
	pthread_mutex_lock(&registry_lock);
	free(registry);
	registry = NULL;
	registry_len = registry_cap = 0;
	pthread_mutex_unlock(&registry_lock);
}

static void put(struct metrics_writer *w, const char *s)
{
	if (!w->err)
		w->err = buf__puts(w->out, s);
}

static void put_n(struct metrics_writer *w, const char *s, size_t n)
{
	if (!w->err)
		w->err = buf__append(w->out, s, n);
}

/* The text format escapes only \ and newline in HELP; OpenMetrics also the double quote. */
static void put_escaped(struct metrics_writer *w, const char *s, bool quote)
{
	const char *run = s;

	for (; *s; s++) {
		const char *esc;

		if (*s == '\\')
			esc = "\\\\";
		else if (*s == '\n')
			esc = "\\n";
		else if (*s == '"' && quote)
			esc = "\\\"";
		else
			continue;
		put_n(w, run, (size_t)(s - run));
		put(w, esc);
		run = s + 1;
	}
	put_n(w, run, (size_t)(s - run));
}

char *metrics__format_value(char *dst, size_t size, double v)
{
	if (isnan(v))
		snprintf(dst, size, "NaN");
	else if (isinf(v))
		snprintf(dst, size, v > 0 ? "+Inf" : "-Inf");
	else if (v == 0)
		/* Also folds -0, which is a valid value but only confuses readers. */
		snprintf(dst, size, "0");
	/* The range check comes first: the cast is only defined where it fits. */
	else if (fabs(v) < 1e17 && v == (double)(long long)v)
		snprintf(dst, size, "%.0f", v);
	else {
		/* The shortest form that reads back exactly: 0.1, not 0.10000000000000001. */
		for (int prec = 15; prec < 17; prec++) {
			snprintf(dst, size, "%.*g", prec, v);
			if (strtod(dst, NULL) == v)
				return dst;
		}
		snprintf(dst, size, "%.17g", v);
	}
	return dst;
}

static const char *type_name(enum metric_type type)
{
	switch (type) {
	case METRIC_COUNTER:
		return "counter";
	case METRIC_GAUGE:
		return "gauge";
	case METRIC_HISTOGRAM:
		return "histogram";
	}
	return "unknown";
}

void metrics__family(struct metrics_writer *w, const char *name, enum metric_type type,
		     const char *help)
{
	/* The 0.0.4 text format names a counter family after its samples, OpenMetrics does not. */
	const char *total = type == METRIC_COUNTER && !w->openmetrics ? "_total" : "";

	if (strlen(name) >= sizeof(w->name)) {
		pr_warn("metric name too long: %.40s...\n", name);
		w->in_family = false;
		return;
	}
	strcpy(w->name, name);
	w->type = type;
	w->in_family = true;

	put(w, "# HELP ");
	put(w, name);
	put(w, total);
	put(w, " ");
	put_escaped(w, help ? help : "", w->openmetrics);
	put(w, "\n# TYPE ");
	put(w, name);
	put(w, total);
	put(w, " ");
	put(w, type_name(type));
	put(w, "\n");
}

/* " # {a="b",...} value timestamp": OpenMetrics only, the text format has no exemplars. */
static void write_exemplar(struct metrics_writer *w, const struct metrics_exemplar *ex)
{
	char num[64];

	if (!ex || !w->openmetrics || !ex->nr_labels)
		return;
	put(w, " # {");
	for (size_t i = 0; i < ex->nr_labels; i++) {
		put(w, i ? "," : "");
		put(w, ex->labels[2 * i]);
		put(w, "=\"");
		put_escaped(w, ex->labels[2 * i + 1], true);
		put(w, "\"");
	}
	put(w, "} ");
	put(w, metrics__format_value(num, sizeof(num), ex->value));
	if (ex->timestamp > 0) {
		snprintf(num, sizeof(num), " %.3f", ex->timestamp);
		put(w, num);
	}
}

/* One label of a sample: '{' before the first, ',' before the others. */
static void put_label(struct metrics_writer *w, bool *any, const char *name, const char *value)
{
	put(w, *any ? "," : "{");
	put(w, name);
	put(w, "=\"");
	put_escaped(w, value ? value : "", true);
	put(w, "\"");
	*any = true;
}

/* Ends a sample line after its name and labels: "} value [exemplar]\n". */
static void put_value(struct metrics_writer *w, bool any, double value,
		      const struct metrics_exemplar *ex)
{
	char num[64];

	if (any)
		put(w, "}");
	put(w, " ");
	put(w, metrics__format_value(num, sizeof(num), value));
	write_exemplar(w, ex);
	put(w, "\n");
}

/* Writes name+suffix{labels,extra} value [exemplar]; extra_name and ex may be NULL. */
static void write_sample_ex(struct metrics_writer *w, const char *suffix, double value,
			    const char *extra_name, const char *extra_value,
			    const struct metrics_exemplar *ex, va_list ap)
{
	bool any = false;
	const char *k;

	if (!w->in_family)
		return;
	put(w, w->name);
	put(w, suffix);
	while ((k = va_arg(ap, const char *)))
		put_label(w, &any, k, va_arg(ap, const char *));
	if (extra_name)
		put_label(w, &any, extra_name, extra_value);
	put_value(w, any, value, ex);
}

static void write_sample(struct metrics_writer *w, const char *suffix, double value,
			 const char *extra_name, const char *extra_value, va_list ap)
{
	write_sample_ex(w, suffix, value, extra_name, extra_value, NULL, ap);
}

void metrics__sample_exemplar(struct metrics_writer *w, const struct metrics_exemplar *ex,
			      double value, ...)
{
	va_list ap;

	va_start(ap, value);
	write_sample_ex(w, w->type == METRIC_COUNTER ? "_total" : "", value, NULL, NULL, ex, ap);
	va_end(ap);
}

void metrics__sample(struct metrics_writer *w, double value, ...)
{
	va_list ap;

	va_start(ap, value);
	write_sample(w, w->type == METRIC_COUNTER ? "_total" : "", value, NULL, NULL, ap);
	va_end(ap);
}

void metrics__sample_suffix(struct metrics_writer *w, const char *suffix, double value, ...)
{
	va_list ap;

	va_start(ap, value);
	write_sample(w, suffix, value, NULL, NULL, ap);
	va_end(ap);
}

void metrics__histogram(struct metrics_writer *w, const double *bounds,
			const unsigned long long *cumulative, size_t nr_bounds,
			unsigned long long count, double sum, ...)
{
	char le[64];
	va_list ap;
	size_t i;

	for (i = 0; i < nr_bounds; i++) {
		metrics__format_value(le, sizeof(le), bounds[i]);
		va_start(ap, sum);
		write_sample(w, "_bucket", (double)cumulative[i], "le", le, ap);
		va_end(ap);
	}
	va_start(ap, sum);
	write_sample(w, "_bucket", (double)count, "le", "+Inf", ap);
	va_end(ap);
	va_start(ap, sum);
	write_sample(w, "_sum", sum, NULL, NULL, ap);
	va_end(ap);
	va_start(ap, sum);
	write_sample(w, "_count", (double)count, NULL, NULL, ap);
	va_end(ap);
}

static double row_value(const struct metrics_row *row, const void *base)
{
	const char *field = (const char *)base + row->offset;
	double v = 0;

	switch (row->field) {
	case METRICS_FIELD_BOOL:
		v = *(const bool *)field;
		break;
	case METRICS_FIELD_UINT:
		v = *(const unsigned int *)field;
		break;
	case METRICS_FIELD_ULONG:
		v = (double)*(const unsigned long *)field;
		break;
	case METRICS_FIELD_ULLONG:
		v = (double)*(const unsigned long long *)field;
		break;
	case METRICS_FIELD_DOUBLE:
		v = *(const double *)field;
		break;
	}
	return row->divisor ? v / row->divisor : v;
}

void metrics__table(struct metrics_writer *w, const struct metrics_row *rows, size_t nr,
		    const void *base)
{
	for (const struct metrics_row *row = rows; row < rows + nr; row++) {
		bool any = false;

		if (row->family) {
			metrics__family(w, row->family, row->type, row->help);
			continue;
		}
		if (!w->in_family)
			continue;
		put(w, w->name);
		put(w, w->type == METRIC_COUNTER ? "_total" : "");
		for (size_t i = 0; i < 2 * METRICS_ROW_LABELS && row->labels[i]; i += 2)
			put_label(w, &any, row->labels[i], row->labels[i + 1]);
		put_value(w, any, row_value(row, base), NULL);
	}
}

int metrics__render(struct buf *out, bool openmetrics)
{
	struct metrics_writer w = {
		.out = out,
		.openmetrics = openmetrics,
	};
	size_t i;

	/* An empty exposition must still be a valid (NUL-terminated) body. */
	w.err = buf__reserve(out, 0);
	if (!w.err)
		out->data[out->len] = '\0';
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < registry_len && !w.err; i++) {
		w.in_family = false;
		registry[i].fn(&w, registry[i].ctx);
	}
	pthread_mutex_unlock(&registry_lock);
	if (openmetrics)
		put(&w, "# EOF\n");
	return w.err;
}

/* Process self-metrics, named and typed as every Prometheus client library does. */

struct proc_stat {
	double start_ticks;
	double vsize;
	double rss_pages;
};

static int read_file(const char *path, char *dst, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(dst, 1, size - 1, f);
	fclose(f);
	dst[n] = '\0';
	return 0;
}

static int read_proc_stat(struct proc_stat *st)
{
	char line[1024];
	char *p, *tok, *save = NULL;
	int field;
	int ret;

	ret = read_file("/proc/self/stat", line, sizeof(line));
	if (ret)
		return ret;
	/* comm may hold spaces and parentheses: fields restart after the last ')'. */
	p = strrchr(line, ')');
	if (!p)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (field = 3, tok = strtok_r(p + 1, " ", &save); tok;
	     field++, tok = strtok_r(NULL, " ", &save)) {
		if (field == 22)
			st->start_ticks = strtod(tok, NULL);
		else if (field == 23)
			st->vsize = strtod(tok, NULL);
		else if (field == 24) {
			st->rss_pages = strtod(tok, NULL);
			return 0;
		}
	}
	return -EINVAL;
}

static int read_boot_time(double *btime)
{
	char text[8192];
	char *p;
	int ret;

	ret = read_file("/proc/stat", text, sizeof(text));
	if (ret)
		return ret;
	p = strstr(text, "\nbtime ");
	if (!p)
		return -EINVAL;
	*btime = strtod(p + 7, NULL);
	return 0;
}

static int count_open_fds(void)
{
	struct dirent *de;
	DIR *dir;
	int n = 0;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -errno;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	/* The directory stream's own descriptor was in the listing. */
	return n - 1;
}

static void process_metrics(struct metrics_writer *w, void *ctx)
{
	struct proc_stat st;
	struct rusage ru;
	struct rlimit rl;
	double btime;
	bool have_stat;
	int fds;

	(void)ctx;
	have_stat = !read_proc_stat(&st);

	metrics__family(w, "process_cpu_seconds", METRIC_COUNTER,
			"Total user and system CPU time spent in seconds.");
	if (!getrusage(RUSAGE_SELF, &ru))
		metrics__sample(w,
				(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
					(double)ru.ru_stime.tv_sec +
					(double)ru.ru_stime.tv_usec / 1e6,
				NULL);

	metrics__family(w, "process_resident_memory_bytes", METRIC_GAUGE,
			"Resident memory size in bytes.");
	if (have_stat)
		metrics__sample(w, st.rss_pages * (double)sysconf(_SC_PAGESIZE), NULL);

	metrics__family(w, "process_virtual_memory_bytes", METRIC_GAUGE,
			"Virtual memory size in bytes.");
	if (have_stat)
		metrics__sample(w, st.vsize, NULL);

	metrics__family(w, "process_open_fds", METRIC_GAUGE, "Number of open file descriptors.");
	fds = count_open_fds();
	if (fds >= 0)
		metrics__sample(w, fds, NULL);

	metrics__family(w, "process_max_fds", METRIC_GAUGE,
			"Maximum number of open file descriptors.");
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		metrics__sample(w, (double)rl.rlim_cur, NULL);

	metrics__family(w, "process_start_time_seconds", METRIC_GAUGE,
			"Start time of the process since unix epoch in seconds.");
	if (have_stat && !read_boot_time(&btime))
		metrics__sample(w, btime + st.start_ticks / (double)sysconf(_SC_CLK_TCK), NULL);
}

int metrics__register_process(void)
{
	return metrics__register(process_metrics, NULL);
}
