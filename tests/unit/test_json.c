/* DEPS: src/lib/json.c src/lib/buf.c */
// SPDX-License-Identifier: GPL-2.0-only
/* JSON through jansson: bounded parsing of request bodies, documents written into a buf. */
#include <string.h>
#include <time.h>

#include "src/lib/json.h"
#include "testlib.h"

static json_t *parse(const char *body, unsigned int depth, unsigned int members, char *why,
		     size_t why_len)
{
	why[0] = '\0';
	return json__parse_object(body, strlen(body), depth, members, 0, why, why_len);
}

TEST(parse_objects_only)
{
	char why[256];
	json_t *v;

	v = parse(" {\"a\": [1, {\"b\": \"x,}]\"}], \"c\": {}} \n", 3, 8, why, sizeof(why));
	CHECK(v && json_is_object(v));
	CHECK_EQ(json_object_size(v), 2);
	json_decref(v);
	static const char *const bad[] = { "", "[1]", "1", "{\"a\": 1", "{\"a\": 1} x",
					   "{\"a\": 1,}", "{\"a\": \"\\q\"}", "{\"a\": \"\\u0000\"}",
					   "{\"a\": \"\xff\"}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = parse(bad[i], 3, 8, why, sizeof(why));
		if (v || !why[0]) {
			FAILF("accepted %s", bad[i]);
			json_decref(v);
			return;
		}
	}
	/* A duplicate key, when asked. */
	v = json__parse_object("{\"a\": 1, \"a\": 2}", 16, 1, 8, JSON_REJECT_DUPLICATES, why,
			       sizeof(why));
	CHECK(!v && strstr(why, "duplicate"));
}

TEST(parse_bounds_before_jansson)
{
	char why[256], body[4096];
	size_t n = 0;
	json_t *v;

	/* Depth counts objects and arrays; brackets inside strings do not count. */
	v = parse("{\"a\": {\"b\": [1]}}", 2, 8, why, sizeof(why));
	CHECK(!v && strstr(why, "deeper than 2"));
	v = parse("{\"a\": \"[[[[{{{{\\\"[[\"}", 1, 8, why, sizeof(why));
	CHECK(v);
	json_decref(v);
	/* Members count those of every container; commas inside strings do not count. */
	v = parse("{\"a\": [1, 2], \"b\": \",,,,,,,,\"}", 2, 4, why, sizeof(why));
	CHECK(v);
	json_decref(v);
	v = parse("{\"a\": [1, 2, 3], \"b\": 1}", 2, 4, why, sizeof(why));
	CHECK(!v && strstr(why, "more than 4 members"));
	v = parse("{\"a\": [], \"b\": {}}", 2, 2, why, sizeof(why));
	CHECK(v);
	json_decref(v);
	/* Refused early even when the rest is not JSON at all. */
	n = (size_t)snprintf(body, sizeof(body), "{\"a\": ");
	while (n < sizeof(body) - 2)
		body[n++] = '[';
	body[n] = '\0';
	v = parse(body, 3, 64, why, sizeof(why));
	CHECK(!v && strstr(why, "deeper than 3"));
}

/* A huge body is refused by one pass over it: no tree of a million values is built. */
TEST(parse_huge_body_cheaply)
{
	size_t len = 1 << 20, n;
	char *body = malloc(len + 1), why[256];
	struct timespec t0, t1;
	json_t *v;

	CHECK(body);
	n = (size_t)snprintf(body, len, "{\"a\": [");
	while (n < len - 3) {
		memcpy(body + n, "{},", 3);
		n += 3;
	}
	strcpy(body + n - 1, "]}");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	v = json__parse_object(body, strlen(body), 3, 64, 0, why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(!v && strstr(why, "more than 64 members"));
	/* jansson alone takes ~200 ms on this body; the pass stops at its 65th member. */
	CHECK((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 50000000L);
	free(body);
}

TEST(write_in_order)
{
	struct buf b = {};

	CHECK_EQ(json__writeln(&b,
			       json_pack("{s:I,s:o,s:[],s:{},s:b,s:n}", "zeta", (json_int_t)1,
					 "alpha", json__str("a\"b\\c\n\x01"), "list", "obj", "b", 0,
					 "none"),
			       0),
		 0);
	CHECK_STR(b.data, "{\"zeta\": 1, \"alpha\": \"a\\\"b\\\\c\\n\\u0001\", \"list\": [], "
			  "\"obj\": {}, \"b\": false, \"none\": null}\n");
	buf__reset(&b);
	CHECK_EQ(json__write(&b, json_pack("[i,{s:i}]", 1, "x", 2), JSON_COMPACT), 0);
	CHECK_STR(b.data, "[1,{\"x\":2}]");
	buf__free(&b);
}

TEST(write_failure_leaves_buf)
{
	struct buf b = {};

	CHECK_EQ(buf__puts(&b, "kept"), 0);
	/* A build that failed (a NULL member) arrives as NULL. */
	CHECK_EQ(json__writeln(&b, json_pack("{s:o}", "a", NULL), 0), -ENOMEM);
	CHECK_STR(b.data, "kept");
	/* jansson refuses to write a string that is not UTF-8: nothing of it stays. */
	CHECK_EQ(json__write(&b, json_pack("[s,o]", "x", json_string_nocheck("\xff")), 0), -ENOMEM);
	CHECK_STR(b.data, "kept");
	CHECK_EQ(b.len, 4);
	buf__free(&b);
}

TEST(strings_from_bytes)
{
	static const char *const cases[][2] = {
		{ "plain", "\"plain\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
		/* a lone byte, a truncated sequence, an overlong '/', a surrogate, past U+10FFFF */
		{ "a\xff" "b", "\"a\xef\xbf\xbd" "b\"" },
		{ "a\xe2\x82", "\"a\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
	};
	struct buf b = {};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf__reset(&b);
		CHECK_EQ(json__write(&b, json__str(cases[i][0]), JSON_ENCODE_ANY), 0);
		CHECK_STR(b.data, cases[i][1]);
	}
	buf__reset(&b);
	CHECK_EQ(json__write(&b, json__str(NULL), JSON_ENCODE_ANY), 0);
	CHECK_STR(b.data, "\"\"");
	buf__free(&b);
}

TEST(unsigned_numbers)
{
	struct buf b = {};
	json_t *v;

	CHECK_EQ(json__write(&b, json_pack("[o,o]", json__u64(0), json__u64(INT64_MAX)), 0), 0);
	CHECK_STR(b.data, "[0, 9223372036854775807]");
	v = json__u64(UINT64_MAX);
	CHECK(json_is_real(v) && json_real_value(v) > 1.8e19);
	json_decref(v);
	buf__free(&b);
}

int main(void)
{
	RUN(parse_objects_only);
	RUN(parse_bounds_before_jansson);
	RUN(parse_huge_body_cheaply);
	RUN(write_in_order);
	RUN(write_failure_leaves_buf);
	RUN(strings_from_bytes);
	RUN(unsigned_numbers);
	return test_summary();
}
