/* DEPS: src/lib/metrics.c src/lib/buf.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/metrics.h"
#include "testlib.h"

static void counters_and_gauges(struct metrics_writer *w, void *ctx)
{
	(void)ctx;
	metrics__family(w, "test_events", METRIC_COUNTER,
			"Events seen.\nSecond line, a \\ backslash and a \"quote\".");
	metrics__sample(w, 3, "path", "a\"b\\c\nd", "kind", "x", NULL);
	metrics__sample(w, 12345, "path", "/", "kind", "y", NULL);
	metrics__family(w, "test_temperature_celsius", METRIC_GAUGE, "Temperature.");
	metrics__sample(w, 21.5, NULL);
	metrics__sample(w, -0.25, "where", "in", NULL);
	metrics__sample(w, 0.1, "where", "tenth", NULL);
	metrics__sample(w, 1e20, "where", "big", NULL);
	metrics__sample(w, -4e9, "where", "cold", NULL);
	metrics__sample(w, __builtin_nan(""), "where", "nan", NULL);
	metrics__sample(w, __builtin_inf(), "where", "inf", NULL);
	metrics__sample(w, -__builtin_inf(), "where", "minf", NULL);
}

static void histogram_and_empty(struct metrics_writer *w, void *ctx)
{
	static const double bounds[] = { 0.005, 0.1, 1 };
	static const unsigned long long cumulative[] = { 0, 1, 3 };

	(void)ctx;
	metrics__family(w, "test_latency_seconds", METRIC_HISTOGRAM, "Latency.");
	metrics__histogram(w, bounds, cumulative, 3, 4, 2.5, "op", "read", NULL);
	metrics__sample_suffix(w, "_bucket", 0, "op", "write", "le", "+Inf", NULL);
	metrics__sample_suffix(w, "_sum", 0, "op", "write", NULL);
	metrics__sample_suffix(w, "_count", 0, "op", "write", NULL);
	metrics__family(w, "test_idle", METRIC_GAUGE, "A family with no samples.");
}

static const char expected_text[] =
	"# HELP test_events_total Events seen.\\nSecond line, a \\\\ backslash and a \"quote\".\n"
	"# TYPE test_events_total counter\n"
	"test_events_total{path=\"a\\\"b\\\\c\\nd\",kind=\"x\"} 3\n"
	"test_events_total{path=\"/\",kind=\"y\"} 12345\n"
	"# HELP test_temperature_celsius Temperature.\n"
	"# TYPE test_temperature_celsius gauge\n"
	"test_temperature_celsius 21.5\n"
	"test_temperature_celsius{where=\"in\"} -0.25\n"
	"test_temperature_celsius{where=\"tenth\"} 0.1\n"
	"test_temperature_celsius{where=\"big\"} 1e+20\n"
	"test_temperature_celsius{where=\"cold\"} -4000000000\n"
	"test_temperature_celsius{where=\"nan\"} NaN\n"
	"test_temperature_celsius{where=\"inf\"} +Inf\n"
	"test_temperature_celsius{where=\"minf\"} -Inf\n"
	"# HELP test_latency_seconds Latency.\n"
	"# TYPE test_latency_seconds histogram\n"
	"test_latency_seconds_bucket{op=\"read\",le=\"0.005\"} 0\n"
	"test_latency_seconds_bucket{op=\"read\",le=\"0.1\"} 1\n"
	"test_latency_seconds_bucket{op=\"read\",le=\"1\"} 3\n"
	"test_latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 4\n"
	"test_latency_seconds_sum{op=\"read\"} 2.5\n"
	"test_latency_seconds_count{op=\"read\"} 4\n"
	"test_latency_seconds_bucket{op=\"write\",le=\"+Inf\"} 0\n"
	"test_latency_seconds_sum{op=\"write\"} 0\n"
	"test_latency_seconds_count{op=\"write\"} 0\n"
	"# HELP test_idle A family with no samples.\n"
	"# TYPE test_idle gauge\n";

/* Only the HELP/TYPE lines of counters and the HELP escaping differ, plus the # EOF. */
static const char expected_openmetrics_head[] =
	"# HELP test_events Events seen.\\nSecond line, a \\\\ backslash and a \\\"quote\\\".\n"
	"# TYPE test_events counter\n"
	"test_events_total{path=\"a\\\"b\\\\c\\nd\",kind=\"x\"} 3\n"
	"test_events_total{path=\"/\",kind=\"y\"} 12345\n"
	"# HELP test_temperature_celsius Temperature.\n";

/* Runs promtool check metrics on text; returns its exit status, its output in out. */
static int promtool_check(const char *text, char *out, size_t out_size)
{
	char path[] = "/tmp/test_metrics.XXXXXX";
	char cmd[128];
	FILE *f, *p;
	size_t n = 0;
	int fd, status;

	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	p = popen(cmd, "r");
	if (!p) {
		unlink(path);
		return -1;
	}
	n = fread(out, 1, out_size - 1, p);
	out[n] = '\0';
	status = pclose(p);
	unlink(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* CHECK_STR for long texts: names the first difference instead of printing both. */
#define CHECK_TEXT(got, want)                                                                \
	do {                                                                                 \
		const char *_g = (got), *_w = (want);                                        \
		size_t _i = 0;                                                               \
		while (_g[_i] && _g[_i] == _w[_i])                                           \
			_i++;                                                                \
		if (_g[_i] != _w[_i]) {                                                      \
			FAILF("%s:%d: differs at %zu: got \"%.60s\", expected \"%.60s\"",      \
			      __FILE__, __LINE__, _i, _g + _i, _w + _i);                     \
			return;                                                              \
		}                                                                            \
	} while (0)

static bool have_promtool(void)
{
	return !system("command -v promtool >/dev/null 2>&1");
}

TEST(format_value)
{
	char b[64];

	CHECK_STR(metrics__format_value(b, sizeof(b), 0), "0");
	CHECK_STR(metrics__format_value(b, sizeof(b), -0.0), "0");
	CHECK_STR(metrics__format_value(b, sizeof(b), 12345), "12345");
	CHECK_STR(metrics__format_value(b, sizeof(b), 18446744073709551615.0), "1.8446744073709552e+19");
	CHECK_STR(metrics__format_value(b, sizeof(b), 1e16), "10000000000000000");
	CHECK_STR(metrics__format_value(b, sizeof(b), 0.005), "0.005");
	CHECK_STR(metrics__format_value(b, sizeof(b), 1.0 / 3), "0.3333333333333333");
	CHECK_STR(metrics__format_value(b, sizeof(b), 0.1 + 0.2), "0.30000000000000004");
	CHECK_STR(metrics__format_value(b, sizeof(b), __builtin_nan("")), "NaN");
	CHECK_STR(metrics__format_value(b, sizeof(b), __builtin_inf()), "+Inf");
	CHECK_STR(metrics__format_value(b, sizeof(b), -__builtin_inf()), "-Inf");
}

TEST(text_format_exact)
{
	struct buf out = {};

	metrics__unregister_all();
	CHECK_EQ(metrics__register(counters_and_gauges, NULL), 0);
	CHECK_EQ(metrics__register(histogram_and_empty, NULL), 0);
	CHECK_EQ(metrics__render(&out, false), 0);
	CHECK_TEXT(out.data, expected_text);
	buf__free(&out);
}

TEST(text_format_passes_promtool)
{
	struct buf out = {};
	char msg[4096];
	int rc;

	if (!have_promtool())
		SKIP("promtool not installed");
	metrics__unregister_all();
	CHECK_EQ(metrics__register(counters_and_gauges, NULL), 0);
	CHECK_EQ(metrics__register(histogram_and_empty, NULL), 0);
	CHECK_EQ(metrics__render(&out, false), 0);
	rc = promtool_check(out.data, msg, sizeof(msg));
	buf__free(&out);
	if (rc != 0 || msg[0]) {
		FAILF("promtool exit %d: %.400s", rc, msg);
		return;
	}
}

TEST(promtool_rejects_broken_text)
{
	char msg[4096];
	int rc;

	/* Proves the check above can fail: a counter without _total and a bad line. */
	if (!have_promtool())
		SKIP("promtool not installed");
	rc = promtool_check("# HELP x_count X.\n# TYPE x_count counter\nx_count{a=\"b} 1\n", msg,
			    sizeof(msg));
	CHECK(rc != 0 || msg[0]);
}

TEST(openmetrics_format)
{
	struct buf out = {};
	const char *tail;

	metrics__unregister_all();
	CHECK_EQ(metrics__register(counters_and_gauges, NULL), 0);
	CHECK_EQ(metrics__register(histogram_and_empty, NULL), 0);
	CHECK_EQ(metrics__render(&out, true), 0);
	CHECK(!strncmp(out.data, expected_openmetrics_head, strlen(expected_openmetrics_head)));
	/* The family name of a counter never carries _total in OpenMetrics. */
	CHECK(!strstr(out.data, "# TYPE test_events_total"));
	CHECK(!strstr(out.data, "# HELP test_events_total"));
	CHECK(strstr(out.data, "\ntest_latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 4\n"));
	CHECK(strstr(out.data, "\n# TYPE test_idle gauge\n"));
	CHECK(out.len >= 6);
	tail = out.data + out.len - 6;
	CHECK_STR(tail, "# EOF\n");
	/* Exactly one # EOF, at the end. */
	CHECK(strstr(out.data, "# EOF") == tail);
	buf__free(&out);
}

static void with_exemplar(struct metrics_writer *w, void *ctx)
{
	const char *labels[] = { "trace_id", "4bf92f3577b34da6a3ce929d0e0e4736", "span_id",
				 "00f067aa0ba902b7" };
	struct metrics_exemplar ex = { labels, 2, 0.01, 1700000000.5 };

	(void)ctx;
	metrics__family(w, "test_cpu_seconds", METRIC_COUNTER, "cpu");
	metrics__sample_exemplar(w, &ex, 1.5, "pid", "7", NULL);
	ex.nr_labels = 0;
	metrics__sample_exemplar(w, &ex, 2, "pid", "8", NULL);
}

TEST(exemplars_only_in_openmetrics)
{
	struct buf out = {};

	metrics__unregister_all();
	CHECK_EQ(metrics__register(with_exemplar, NULL), 0);
	CHECK_EQ(metrics__render(&out, true), 0);
	CHECK(strstr(out.data, "\ntest_cpu_seconds_total{pid=\"7\"} 1.5 # {trace_id=\"4bf92f3577b34"
			       "da6a3ce929d0e0e4736\",span_id=\"00f067aa0ba902b7\"} 0.01 "
			       "1700000000.500\n"));
	/* No exemplar to show: a plain sample. */
	CHECK(strstr(out.data, "\ntest_cpu_seconds_total{pid=\"8\"} 2\n"));
	buf__reset(&out);
	CHECK_EQ(metrics__render(&out, false), 0);
	CHECK(strstr(out.data, "\ntest_cpu_seconds_total{pid=\"7\"} 1.5\n"));
	CHECK(!strstr(out.data, "trace_id"));
	buf__free(&out);
	metrics__unregister_all();
}

TEST(empty_registry)
{
	struct buf out = {};

	metrics__unregister_all();
	CHECK_EQ(metrics__render(&out, false), 0);
	CHECK_STR(out.data, "");
	CHECK_EQ(out.len, 0);
	CHECK_EQ(metrics__render(&out, true), 0);
	CHECK_STR(out.data, "# EOF\n");
	buf__free(&out);
}

TEST(unregister_one)
{
	struct buf out = {};
	int a, b;

	metrics__unregister_all();
	CHECK_EQ(metrics__register(counters_and_gauges, &a), 0);
	CHECK_EQ(metrics__register(histogram_and_empty, &b), 0);
	CHECK_EQ(metrics__register(counters_and_gauges, &b), 0);
	metrics__unregister(counters_and_gauges, &a);
	CHECK_EQ(metrics__render(&out, false), 0);
	/* The histogram now comes first, then the counter registered with &b. */
	CHECK(!strncmp(out.data, "# HELP test_latency_seconds ", 28));
	CHECK(strstr(out.data, "# TYPE test_events_total counter"));
	metrics__unregister(counters_and_gauges, &b);
	buf__reset(&out);
	CHECK_EQ(metrics__render(&out, false), 0);
	CHECK(!strstr(out.data, "test_events"));
	buf__free(&out);
	metrics__unregister_all();
}

static void *render_loop(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < 300; i++) {
		struct buf out = {};

		if (metrics__render(&out, false) || strcmp(out.data, expected_text))
			bad++;
		buf__free(&out);
	}
	return (void *)bad;
}

TEST(concurrent_renders)
{
	pthread_t t[4];
	void *bad;
	long total = 0;
	int i;

	metrics__unregister_all();
	CHECK_EQ(metrics__register(counters_and_gauges, NULL), 0);
	CHECK_EQ(metrics__register(histogram_and_empty, NULL), 0);
	for (i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, render_loop, NULL), 0);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &bad);
		total += (long)bad;
	}
	CHECK_EQ(total, 0);
	metrics__unregister_all();
}

static double sample_value(const char *text, const char *name)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "\n%s ", name);
	p = strstr(text, key);
	return p ? strtod(p + strlen(key), NULL) : -1;
}

TEST(process_metrics)
{
	struct buf out = {};
	char msg[4096];
	double now = (double)time(NULL);
	int rc;

	metrics__unregister_all();
	CHECK_EQ(metrics__register_process(), 0);
	CHECK_EQ(metrics__render(&out, false), 0);
	CHECK(strstr(out.data, "# TYPE process_cpu_seconds_total counter\n"));
	CHECK(sample_value(out.data, "process_cpu_seconds_total") >= 0);
	CHECK(sample_value(out.data, "process_resident_memory_bytes") > 100000);
	CHECK(sample_value(out.data, "process_virtual_memory_bytes") >=
	      sample_value(out.data, "process_resident_memory_bytes"));
	/* stdin, stdout, stderr at least. */
	CHECK(sample_value(out.data, "process_open_fds") >= 3);
	CHECK(sample_value(out.data, "process_max_fds") >= sample_value(out.data, "process_open_fds"));
	CHECK(sample_value(out.data, "process_start_time_seconds") > now - 3600);
	CHECK(sample_value(out.data, "process_start_time_seconds") < now + 2);
	if (have_promtool()) {
		rc = promtool_check(out.data, msg, sizeof(msg));
		if (rc != 0 || msg[0]) {
			FAILF("promtool exit %d: %.400s", rc, msg);
			return;
		}
	}
	buf__reset(&out);
	CHECK_EQ(metrics__render(&out, true), 0);
	CHECK(strstr(out.data, "# TYPE process_cpu_seconds counter\nprocess_cpu_seconds_total "));
	buf__free(&out);
	metrics__unregister_all();
}

/* Every field type a table reads, a nested struct and an array indexed by constant. */
struct table_stats {
	unsigned long long drops[3];
	uint64_t build_ns;
	unsigned int cpus;
	bool enabled;
	double ratio;
	struct {
		uint32_t ppm;
		size_t bytes;
	} inner;
};

enum { DROP_RING, DROP_STORE, DROP_BAD };

static const struct metrics_row table_rows[] = {
	METRICS_SAMPLE(struct table_stats, cpus), /* before any family: not written */
	METRICS_FAMILY("test_dropped", METRIC_COUNTER, "Drops, by \"reason\".\nSecond line."),
	METRICS_SAMPLE(struct table_stats, drops[DROP_RING], "profile", "cpu", "reason", "ring"),
	METRICS_SAMPLE(struct table_stats, drops[DROP_STORE], "profile", "cpu", "reason", "store"),
	METRICS_SAMPLE(struct table_stats, drops[DROP_BAD], "profile", "cpu", "reason", "a\"b\\c"),
	METRICS_FAMILY("test_build_seconds", METRIC_COUNTER, "Build time."),
	METRICS_SAMPLE_DIV(struct table_stats, build_ns, 1e9),
	METRICS_FAMILY("test_cpus", METRIC_GAUGE, "CPUs."),
	METRICS_SAMPLE(struct table_stats, cpus),
	METRICS_FAMILY("test_enabled", METRIC_GAUGE, "Enabled."),
	METRICS_SAMPLE(struct table_stats, enabled, "a", "1", "b", "2", "c", "3"),
	METRICS_FAMILY("test_settings", METRIC_GAUGE, "Settings."),
	METRICS_SAMPLE(struct table_stats, ratio, "what", "ratio"),
	METRICS_SAMPLE_DIV(struct table_stats, inner.ppm, 1e6, "what", "probability"),
	METRICS_SAMPLE(struct table_stats, inner.bytes, "what", "bytes"),
	METRICS_FAMILY("test_empty", METRIC_GAUGE, "No samples."),
};

static const struct table_stats table_values = {
	.drops = { 7, 0, 18446744073709551615ULL },
	.build_ns = 1234567891,
	.cpus = 16,
	.enabled = true,
	.ratio = 0.1,
	.inner = { .ppm = 333333, .bytes = 65536 },
};

static const char expected_table_text[] =
	"# HELP test_dropped_total Drops, by \"reason\".\\nSecond line.\n"
	"# TYPE test_dropped_total counter\n"
	"test_dropped_total{profile=\"cpu\",reason=\"ring\"} 7\n"
	"test_dropped_total{profile=\"cpu\",reason=\"store\"} 0\n"
	"test_dropped_total{profile=\"cpu\",reason=\"a\\\"b\\\\c\"} 1.8446744073709552e+19\n"
	"# HELP test_build_seconds_total Build time.\n"
	"# TYPE test_build_seconds_total counter\n"
	"test_build_seconds_total 1.234567891\n"
	"# HELP test_cpus CPUs.\n"
	"# TYPE test_cpus gauge\n"
	"test_cpus 16\n"
	"# HELP test_enabled Enabled.\n"
	"# TYPE test_enabled gauge\n"
	"test_enabled{a=\"1\",b=\"2\",c=\"3\"} 1\n"
	"# HELP test_settings Settings.\n"
	"# TYPE test_settings gauge\n"
	"test_settings{what=\"ratio\"} 0.1\n"
	"test_settings{what=\"probability\"} 0.333333\n"
	"test_settings{what=\"bytes\"} 65536\n"
	"# HELP test_empty No samples.\n"
	"# TYPE test_empty gauge\n";

static void table_families(struct metrics_writer *w, void *ctx)
{
	METRICS_TABLE(w, table_rows, ctx);
}

/* The same families as table_rows, written call by call as before the tables. */
static void chained_families(struct metrics_writer *w, void *ctx)
{
	const struct table_stats *s = ctx;

	metrics__family(w, "test_dropped", METRIC_COUNTER, "Drops, by \"reason\".\nSecond line.");
	metrics__sample(w, s->drops[DROP_RING], "profile", "cpu", "reason", "ring", NULL);
	metrics__sample(w, s->drops[DROP_STORE], "profile", "cpu", "reason", "store", NULL);
	metrics__sample(w, s->drops[DROP_BAD], "profile", "cpu", "reason", "a\"b\\c", NULL);
	metrics__family(w, "test_build_seconds", METRIC_COUNTER, "Build time.");
	metrics__sample(w, s->build_ns / 1e9, NULL);
	metrics__family(w, "test_cpus", METRIC_GAUGE, "CPUs.");
	metrics__sample(w, s->cpus, NULL);
	metrics__family(w, "test_enabled", METRIC_GAUGE, "Enabled.");
	metrics__sample(w, s->enabled, "a", "1", "b", "2", "c", "3", NULL);
	metrics__family(w, "test_settings", METRIC_GAUGE, "Settings.");
	metrics__sample(w, s->ratio, "what", "ratio", NULL);
	metrics__sample(w, s->inner.ppm / 1e6, "what", "probability", NULL);
	metrics__sample(w, s->inner.bytes, "what", "bytes", NULL);
	metrics__family(w, "test_empty", METRIC_GAUGE, "No samples.");
}

TEST(table_exact)
{
	/* OpenMetrics escapes the quote in HELP and names the counter family without _total. */
	static const char om_head[] =
		"# HELP test_dropped Drops, by \\\"reason\\\".\\nSecond line.\n"
		"# TYPE test_dropped counter\n"
		"test_dropped_total{profile=\"cpu\",reason=\"ring\"} 7\n";
	struct buf out = {};

	metrics__unregister_all();
	CHECK_EQ(metrics__register(table_families, (void *)&table_values), 0);
	CHECK_EQ(metrics__render(&out, false), 0);
	CHECK_TEXT(out.data, expected_table_text);
	buf__reset(&out);
	CHECK_EQ(metrics__render(&out, true), 0);
	CHECK(!strncmp(out.data, om_head, strlen(om_head)));
	CHECK(strstr(out.data, "\n# TYPE test_empty gauge\n# EOF\n"));
	buf__free(&out);
	metrics__unregister_all();
}

/* A table writes byte for byte what the chain of calls it replaces wrote, in both formats. */
TEST(table_matches_calls)
{
	/* Values whose scaled forms print differently if divided and multiplied by the inverse. */
	static const uint64_t ns[] = { 3, 7, 1234567891, 999999999999, 18446744073709551615ULL };
	struct buf a = {}, b = {};

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		struct table_stats s = table_values;

		s.build_ns = ns[i];
		s.inner.ppm = (uint32_t)ns[i];
		for (int om = 0; om < 2; om++) {
			metrics__unregister_all();
			CHECK_EQ(metrics__register(table_families, &s), 0);
			buf__reset(&a);
			CHECK_EQ(metrics__render(&a, om), 0);
			metrics__unregister_all();
			CHECK_EQ(metrics__register(chained_families, &s), 0);
			buf__reset(&b);
			CHECK_EQ(metrics__render(&b, om), 0);
			CHECK_TEXT(a.data, b.data);
		}
	}
	buf__free(&a);
	buf__free(&b);
	metrics__unregister_all();
}

int main(void)
{
	RUN(format_value);
	RUN(text_format_exact);
	RUN(text_format_passes_promtool);
	RUN(promtool_rejects_broken_text);
	RUN(openmetrics_format);
	RUN(exemplars_only_in_openmetrics);
	RUN(empty_registry);
	RUN(unregister_one);
	RUN(concurrent_renders);
	RUN(process_metrics);
	RUN(table_exact);
	RUN(table_matches_calls);
	return test_summary();
}
