/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_TESTLIB_H
#define AUTOPROF_TESTLIB_H

/*
 * A minimal test harness. Each test binary prints one line per test: "PASS name",
 * "FAIL name: why" or "SKIP name: why"; tests/run.sh tallies them. Exit status is 1 if any failed.
 *
 *   TEST(parses_line) { CHECK(x == 1); CHECK_STR(s, "abc"); }
 *   int main(void) { RUN(parses_line); return test_summary(); }
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failed_total;
static int test_cur_failed;
static int test_cur_skipped;
static char test_cur_why[512];

#define TEST(name) static void test_##name(void)

#define FAILF(...)                                                                       \
	do {                                                                                 \
		if (!test_cur_failed)                                                        \
			snprintf(test_cur_why, sizeof(test_cur_why), __VA_ARGS__);           \
		test_cur_failed = 1;                                                         \
	} while (0)

#define CHECK(cond)                                                                      \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			FAILF("%s:%d: CHECK(%s)", __FILE__, __LINE__, #cond);                \
			return;                                                              \
		}                                                                            \
	} while (0)

#define CHECK_EQ(a, b)                                                                   \
	do {                                                                                 \
		long long _a = (long long)(a), _b = (long long)(b);                          \
		if (_a != _b) {                                                              \
			FAILF("%s:%d: %s == %lld, expected %lld", __FILE__, __LINE__, #a, _a, _b); \
			return;                                                              \
		}                                                                            \
	} while (0)

#define CHECK_STR(a, b)                                                                  \
	do {                                                                                 \
		const char *_a = (a), *_b = (b);                                             \
		if (!_a || !_b || strcmp(_a, _b)) {                                          \
			FAILF("%s:%d: %s == \"%s\", expected \"%s\"", __FILE__, __LINE__, #a,   \
			      _a ? _a : "(null)", _b ? _b : "(null)");                       \
			return;                                                              \
		}                                                                            \
	} while (0)

#define SKIP(...)                                                                        \
	do {                                                                                 \
		snprintf(test_cur_why, sizeof(test_cur_why), __VA_ARGS__);                   \
		test_cur_skipped = 1;                                                        \
		return;                                                                      \
	} while (0)

#define RUN(name)                                                                        \
	do {                                                                                 \
		test_cur_failed = test_cur_skipped = 0;                                      \
		test_cur_why[0] = '\0';                                                      \
		test_##name();                                                               \
		if (test_cur_failed) {                                                       \
			printf("FAIL %s: %s\n", #name, test_cur_why);                        \
			test_failed_total++;                                                 \
		} else if (test_cur_skipped) {                                               \
			printf("SKIP %s: %s\n", #name, test_cur_why);                        \
		} else {                                                                     \
			printf("PASS %s\n", #name);                                          \
		}                                                                            \
		fflush(stdout);                                                              \
	} while (0)

/*
 * The address and size `nm -S` reports for a defined symbol (from .dynsym with dynamic), as an
 * independent reference for the symbol readers. Returns 0 or -ENOENT.
 */
static inline int test_nm_symbol(const char *path, const char *name, int dynamic, uint64_t *addr,
				 uint64_t *size)
{
	char cmd[PATH_MAX + 64], line[512];
	int err = -ENOENT;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s '%s' 2>/dev/null", dynamic ? "-D" : "",
		 path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		char type, sym[256];
		uint64_t a, s;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %255s", &a, &s, &type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*addr = a;
			*size = s;
			err = 0;
		}
	}
	pclose(p);
	return err;
}

/* The entry point `readelf -h` reports, as an independent reference. Returns 0 or -ENOENT. */
static inline int test_elf_entry(const char *path, uint64_t *entry)
{
	char cmd[PATH_MAX + 64], line[512];
	int err = -ENOENT;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -h '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, " Entry point address: %" SCNx64, entry) == 1)
			err = 0;
	pclose(p);
	return err;
}

static inline int test_summary(void)
{
	return test_failed_total ? 1 : 0;
}

#endif
