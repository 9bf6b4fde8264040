/* DEPS: src/probes/histogram.c src/probes/probespec.c src/lib/json.c src/lib/buf.c */
// SPDX-License-Identifier: GPL-2.0-only
/* Latency probes' pure logic: histogram buckets and quantiles, probe requests. */
#include <errno.h>
#include <string.h>

#include "src/probes/histogram.h"
#include "src/probes/probespec.h"
#include "testlib.h"

TEST(buckets_cover_every_value_once)
{
	/* Every value falls in the bucket whose bounds hold it, and bounds ascend. */
	for (uint64_t v = 0; v < 100000; v += 1 + v / 50) {
		size_t b = latency__bucket(v);

		CHECK(v <= latency__le(b));
		CHECK(b == 0 || v > latency__le(b - 1));
	}
	for (size_t i = 1; i < LATENCY_BUCKETS; i++)
		CHECK(latency__le(i) > latency__le(i - 1));
	CHECK_EQ(latency__bucket(16), 16);
	CHECK_EQ(latency__le(latency__bucket(17)), 20);
	/* Powers of two are bounds (the Prometheus le). */
	for (int k = 5; k <= 44; k++)
		CHECK_EQ(latency__le(latency__bucket(1ULL << k)), 1ULL << k);
	CHECK_EQ(latency__bucket(~0ULL), LATENCY_BUCKETS - 1);
	/* A quarter of a power of two wide: at most 25 % above the value. */
	CHECK(latency__le(latency__bucket(1000000)) <= 1250000);
}

TEST(quantiles_split_fast_and_slow)
{
	double c[LATENCY_BUCKETS] = {0};
	uint64_t p50, p90, p95, p99;

	/* 900 calls of 10 us, 100 of 5 ms: p95 and p99 among the slow, p50 and p90 not. */
	c[latency__bucket(10000)] = 900;
	c[latency__bucket(5000000)] = 100;
	p50 = latency__quantile(c, 0.5);
	p90 = latency__quantile(c, 0.9);
	p95 = latency__quantile(c, 0.95);
	p99 = latency__quantile(c, 0.99);
	CHECK(p50 <= 10240 && p50 > 8192);
	CHECK(p90 <= 10240);
	CHECK(p95 > 4194304 && p95 <= 5242880);
	CHECK(p99 >= p95 && p99 <= 5242880);
	memset(c, 0, sizeof(c));
	CHECK_EQ(latency__quantile(c, 0.5), 0);
}

/*
 * 90 % of calls at 0.2 ms, 10 % in a tight cluster at 2.4 ms (+-0.5 %): the p95 must leave about
 * half of the cluster above it. Interpolating in the histogram's bucket put it above all of them.
 */
TEST(exact_quantile_of_a_tight_cluster)
{
	uint64_t vals[1000], p95;
	size_t above = 0;

	for (size_t i = 0; i < 1000; i++)
		vals[i] = i % 10 == 9 ? 2400000 + (i * 7919) % 24000 - 12000 : 200000 + i % 50;
	latency__sort(vals, 1000);
	p95 = latency__rank(vals, 1000, 0.95);
	for (size_t i = 0; i < 1000; i++)
		above += vals[i] > p95;
	CHECK(p95 >= 2388000 && p95 <= 2412000);
	CHECK(above >= 45 && above <= 50);
	CHECK_EQ(vals[0], 200000);
	CHECK_EQ(latency__rank(vals, 1000, 0.5), vals[499]);
	CHECK_EQ(latency__rank(vals, 1000, 1.0), vals[999]);
	CHECK_EQ(latency__rank(vals, 20, 0.95), vals[18]);
	CHECK_EQ(latency__rank(vals, 1, 0.01), vals[0]);
	CHECK_EQ(latency__rank(vals, 0, 0.5), 0);
}

TEST(durations)
{
	uint64_t ns;

	CHECK_EQ(probespec__duration("5ms", &ns), 0);
	CHECK_EQ(ns, 5000000);
	CHECK_EQ(probespec__duration("250us", &ns), 0);
	CHECK_EQ(ns, 250000);
	CHECK_EQ(probespec__duration("1.5s", &ns), 0);
	CHECK_EQ(ns, 1500000000);
	CHECK_EQ(probespec__duration("5", &ns), -EINVAL);
	CHECK_EQ(probespec__duration("ms", &ns), -EINVAL);
	CHECK_EQ(probespec__duration("-1ms", &ns), -EINVAL);
	CHECK_EQ(probespec__duration("2h", &ns), -EINVAL);
}

TEST(requests)
{
	struct probe_spec s;
	char why[256];

	CHECK_EQ(probespec__parse("{\"binary\": \"/usr/bin/app\", \"function\": \"handle\"}", &s,
				  why, sizeof(why)),
		 0);
	CHECK(!strcmp(s.binary, "/usr/bin/app"));
	CHECK_STR(s.function, "handle");
	CHECK_STR(s.name, "handle");
	CHECK_EQ(s.pid, 0);
	CHECK_EQ(s.threshold_ns, 0);
	CHECK_EQ(s.inside, 0);
	CHECK_EQ(probespec__parse("{\"binary\":\"/a\",\"location\":\"x.c:12\",\"pid\":42,"
				  "\"name\":\"branch\",\"threshold\":\"5ms\","
				  "\"inside\":{\"probe\":3,\"latency\":\"slow\"}}",
				  &s, why, sizeof(why)),
		 0);
	CHECK(!strcmp(s.location, "x.c:12"));
	CHECK_STR(s.name, "branch");
	CHECK_EQ(s.pid, 42);
	CHECK_EQ(s.threshold_ns, 5000000);
	CHECK_EQ(s.inside, 3);
	CHECK_EQ(s.inside_latency, STORE_LATENCY_SLOW);
	/* What a user gets wrong, each with a reason. */
	CHECK_EQ(probespec__parse("", &s, why, sizeof(why)), -EINVAL);
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\"", &s, why, sizeof(why)), -EINVAL);
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\"}", &s, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "function"));
	CHECK_EQ(probespec__parse("{\"binary\": \"a\", \"function\": \"f\"}", &s, why, sizeof(why)),
		 -EINVAL);
	CHECK(strstr(why, "absolute"));
	CHECK_EQ(
	    probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"location\": \"x.c:1\"}",
			     &s, why, sizeof(why)),
	    -EINVAL);
	CHECK_EQ(
	    probespec__parse("{\"binary\": \"/a\", \"location\": \"x.c\"}", &s, why, sizeof(why)),
	    -EINVAL);
	CHECK(strstr(why, "location"));
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"pid\": -1}", &s, why,
				  sizeof(why)),
		 -EINVAL);
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"bogus\": 1}", &s,
				  why, sizeof(why)),
		 -EINVAL);
	CHECK(strstr(why, "bogus"));
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"threshold\": \"x\"}",
				  &s, why, sizeof(why)),
		 -EINVAL);
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"inside\": "
				  "{\"probe\": 1, \"latency\": \"medium\"}}",
				  &s, why, sizeof(why)),
		 -EINVAL);
}

TEST(captures)
{
	struct probe_spec s;
	char why[256];

	CHECK_EQ(probespec__capture("len"), 0);
	CHECK_EQ(probespec__capture("req->hdr.len"), 0);
	CHECK_EQ(probespec__capture("_a1->b->c->d"), 0);
	CHECK_EQ(probespec__capture("a->b->c->d->e"), -EINVAL); /* four members */
	CHECK_EQ(probespec__capture("*p"), -EINVAL);
	CHECK_EQ(probespec__capture("a->"), -EINVAL);
	CHECK_EQ(probespec__capture("1x"), -EINVAL);
	CHECK_EQ(probespec__capture("a-b"), -EINVAL);
	CHECK_EQ(probespec__capture(""), -EINVAL);
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"capture\": "
				  "[\"len\", \"r->id\"]}",
				  &s, why, sizeof(why)),
		 0);
	CHECK_EQ(s.nr_captures, 2);
	CHECK_STR(s.capture[1], "r->id");
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"capture\": "
				  "[\"len\", \"x.\"]}",
				  &s, why, sizeof(why)),
		 -EINVAL);
	CHECK(strstr(why, "\"x.\""));
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"capture\": "
				  "\"len\"}",
				  &s, why, sizeof(why)),
		 -EINVAL);
	CHECK_EQ(probespec__parse("{\"binary\": \"/a\", \"function\": \"f\", \"capture\": "
				  "[\"a\", \"b\", \"c\", \"d\", \"e\"]}",
				  &s, why, sizeof(why)),
		 -EINVAL);
	CHECK(strstr(why, "at most 4"));
}

TEST(short_form)
{
	struct probe_spec s;
	char why[256];
	const char *a = "/bin/app:handle", *b = "/bin/app:server.c:1312";

	CHECK_EQ(probespec__parse_short(a, strlen(a), &s, why, sizeof(why)), 0);
	CHECK(!strcmp(s.binary, "/bin/app"));
	CHECK_STR(s.function, "handle");
	CHECK_EQ(probespec__parse_short(b, strlen(b), &s, why, sizeof(why)), 0);
	CHECK(!strcmp(s.location, "server.c:1312"));
	CHECK_STR(s.function, "");
	CHECK_EQ(probespec__parse_short("app:f", 5, &s, why, sizeof(why)), -EINVAL);
	CHECK_EQ(probespec__parse_short("/bin/app", 8, &s, why, sizeof(why)), -EINVAL);
}

int main(void)
{
	RUN(buckets_cover_every_value_once);
	RUN(quantiles_split_fast_and_slow);
	RUN(exact_quantile_of_a_tight_cluster);
	RUN(durations);
	RUN(requests);
	RUN(captures);
	RUN(short_form);
	return test_summary();
}
