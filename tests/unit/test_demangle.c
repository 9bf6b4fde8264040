/* DEPS: src/symbolize/demangle.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Demangling of the symbols nm lists in fixtures built by tests/unit/debuginfo.mk: C++ against
 * c++filt, Rust (legacy and v0 manglings of tests/fixtures/rustsyms.rs) against the paths the
 * source defines.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include "symbolize/demangle.h"
#include "testlib.h"

#define MAX_SYMS 4096

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/fixtures/%s", build && *build ? build : "build", name);
	return path;
}

struct syms {
	size_t nr;
	char *v[MAX_SYMS];
};

static void syms__free(struct syms *s)
{
	for (size_t i = 0; i < s->nr; i++)
		free(s->v[i]);
	s->nr = 0;
}

/* The defined symbols of path whose names start with prefix. */
static int syms__load(struct syms *s, const char *path, const char *prefix)
{
	char cmd[PATH_MAX + 64], line[8192];
	FILE *p;

	s->nr = 0;
	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p) && s->nr < MAX_SYMS) {
		char *name = strrchr(line, ' ');

		if (!name)
			continue;
		name++;
		name[strcspn(name, "\n")] = '\0';
		if (strncmp(name, prefix, strlen(prefix)))
			continue;
		s->v[s->nr] = strdup(name);
		if (!s->v[s->nr])
			break;
		s->nr++;
	}
	return pclose(p) ? -EIO : 0;
}

/* What c++filt makes of sym; sym comes from nm, so it needs no shell quoting beyond ''. */
static int cxxfilt(const char *sym, char *out, size_t size)
{
	char cmd[8192];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "c++filt '%s'", sym);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	if (!fgets(out, (int)size, p))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return pclose(p) ? -EIO : 0;
}

TEST(cxx_matches_cxxfilt)
{
	static const char *const expected[] = {
	    "fixture_ns::inner::scale(long, char const*)",
	    "fixture_ns::Widget fixture_ns::twice<fixture_ns::Widget>(fixture_ns::Widget)",
	    "int fixture_ns::twice<int>(int)",
	    "fixture_ns::Widget::get() const",
	    "fixture_ns::Widget::operator==(fixture_ns::Widget const&) const",
	    "fixture_ns::Widget::operator+(fixture_ns::Widget const&) const",
	};
	bool seen[sizeof(expected) / sizeof(expected[0])] = {};
	struct syms s;

	CHECK(syms__load(&s, fixture("cxxsyms"), "_Z") == 0);
	CHECK(s.nr >= 6);
	for (size_t i = 0; i < s.nr; i++) {
		char want[8192];
		char *got;

		if (cxxfilt(s.v[i], want, sizeof(want))) {
			FAILF("c++filt %s failed", s.v[i]);
			break;
		}
		got = demangle__symbol(s.v[i]);
		if (!got || strcmp(got, want)) {
			FAILF("%.150s: \"%.150s\", c++filt says \"%.150s\"", s.v[i],
			      got ? got : "(null)", want);
			free(got);
			break;
		}
		for (size_t j = 0; j < sizeof(expected) / sizeof(expected[0]); j++)
			seen[j] |= !strcmp(got, expected[j]);
		free(got);
	}
	syms__free(&s);
	for (size_t j = 0; j < sizeof(expected) / sizeof(expected[0]); j++) {
		if (!seen[j])
			FAILF("no symbol demangles to %s", expected[j]);
	}
}

/* Standard substitutions stay short (c++filt, being verbose, spells them out). */
TEST(cxx_std_abbreviation)
{
	char *got = demangle__symbol("_Z3fooSs");

	CHECK_STR(got, "foo(std::string)");
	free(got);
}

TEST(cxx_clone_suffix)
{
	char *got = demangle__symbol("_Z3fooi.cold");

	CHECK_STR(got, "foo(int) [clone .cold]");
	free(got);
}

/*
 * Each symbol of binary that starts with prefix and contains infix must demangle to want, and
 * there must be at least one.
 */
static void check_rust(const char *binary, const char *prefix, const char *infix, const char *want)
{
	size_t matched = 0;
	struct syms s;
	int err;

	if (access(fixture(binary), X_OK))
		SKIP("%s not built (no rustc?)", fixture(binary));
	err = syms__load(&s, fixture(binary), prefix);
	if (err) {
		FAILF("nm %s: %s", binary, strerror(-err));
		return;
	}
	for (size_t i = 0; i < s.nr; i++) {
		char *got;

		if (!strstr(s.v[i], infix))
			continue;
		matched++;
		got = demangle__symbol(s.v[i]);
		if (!got || strcmp(got, want)) {
			FAILF("%s: \"%s\", expected \"%s\"", s.v[i], got ? got : "(null)", want);
			free(got);
			break;
		}
		free(got);
	}
	syms__free(&s);
	if (!matched)
		FAILF("%s has no symbol %s...%s...", binary, prefix, infix);
}

TEST(rust_legacy)
{
	/* The hash path segment must be there for the test to mean anything. */
	check_rust("rustsyms-legacy", "_ZN8rustsyms6module8function17h", "E",
		   "rustsyms::module::function");
	if (test_cur_failed || test_cur_skipped)
		return;
	check_rust("rustsyms-legacy", "_ZN8rustsyms6module6nested6deeper17h", "E",
		   "rustsyms::module::nested::deeper");
}

TEST(rust_v0)
{
	check_rust("rustsyms-v0", "_RNv", "8rustsyms6module8function",
		   "rustsyms::module::function");
	if (test_cur_failed || test_cur_skipped)
		return;
	check_rust("rustsyms-v0", "_RNv", "8rustsyms6module6nested6deeper",
		   "rustsyms::module::nested::deeper");
}

/* LLVM's .llvm.N suffix on a local symbol does not hide the name. */
TEST(rust_llvm_suffix)
{
	char *got = demangle__symbol("_ZN8rustsyms6module8function17h0cbbe9ff7e18d418E.llvm.1234");

	CHECK_STR(got, "rustsyms::module::function");
	free(got);
	got = demangle__symbol("_RNvNtCs6GmmlP4bgsG_8rustsyms6module8function.llvm.1234");
	CHECK_STR(got, "rustsyms::module::function");
	free(got);
}

/* libiberty does not take a hash this regular for Rust; the hash still goes. */
TEST(rust_legacy_regular_hash)
{
	char *got = demangle__symbol("_ZN3foo3bar17h0000000000000000E");

	CHECK_STR(got, "foo::bar");
	free(got);
}

TEST(not_mangled)
{
	static const char *const names[] = {
	    "main",  "debuginfo_local_fn",     "_start", "", "_Z", "_Zfoo",
	    "_Rfoo", "__libc_start_call_main", "_"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *got = demangle__symbol(names[i]);

		if (got) {
			FAILF("\"%s\" demangled to \"%s\"", names[i], got);
			free(got);
			return;
		}
	}
	CHECK(demangle__symbol(NULL) == NULL);
}

/* A name past the length bound stays mangled instead of costing megabytes of stack. */
TEST(overlong_name)
{
	size_t len = 64 << 10;
	char *sym = malloc(len + 1), *got;

	CHECK(sym);
	/* _ZN, then "10abcdefghij" repeated, then E: a valid name, far too long. */
	memcpy(sym, "_ZN", 3);
	for (size_t i = 3; i < len; i++)
		sym[i] = "10abcdefghij"[(i - 3) % 12];
	sym[len - 1] = 'E';
	sym[len] = '\0';
	got = demangle__symbol(sym);
	free(sym);
	CHECK(got == NULL);
}

int main(void)
{
	RUN(cxx_matches_cxxfilt);
	RUN(cxx_std_abbreviation);
	RUN(cxx_clone_suffix);
	RUN(rust_legacy);
	RUN(rust_v0);
	RUN(rust_llvm_suffix);
	RUN(rust_legacy_regular_hash);
	RUN(not_mangled);
	RUN(overlong_name);
	return test_summary();
}
