/* DEPS: src/symbolize/perfmap.c src/lib/log.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Perf map parsing: hand-written maps with the awkward cases (unsorted, re-emitted and
 * overlapping code, names with spaces, junk), the size bounds, and a real map written by node.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/perfmap.h"
#include "testlib.h"

static char tmpdir[] = "/tmp/test_perfmap.XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -EIO : 0;
}

/* addr must resolve to name starting at start, or (name NULL) to nothing. */
static bool lookup_is(const struct perf_map *pm, uint64_t addr, const char *name, uint64_t start)
{
	uint64_t got_start = 0;
	const char *got = perf_map__lookup(pm, addr, &got_start);

	if (!name && !got)
		return true;
	if (name && got && !strcmp(got, name) && got_start == start)
		return true;
	FAILF("%#" PRIx64 ": \"%s\" at %#" PRIx64 ", expected \"%s\" at %#" PRIx64, addr,
	      got ? got : "(null)", got_start, name ? name : "(null)", start);
	return false;
}

#define CHECK_LOOKUP(pm, addr, name, start)                                                        \
	do {                                                                                       \
		if (!lookup_is(pm, addr, name, start))                                             \
			goto out;                                                                  \
	} while (0)

TEST(handwritten)
{
	static const char map[] = "c000 10 crlf\r\n"
				  "3000 10 third\n"
				  "1000 100 first func\n"
				  "2000 80 second with  spaces\n"
				  "garbage line\n"
				  "\n"
				  "zzzz 10 bad start\n"
				  "1050 20 re-emitted inside first\n"
				  "4000 0 zero size\n"
				  "5000 10\n"
				  "5100 10 \n"
				  "0x6000 0x20 hex prefixed\n"
				  "3000 10 third again\n"
				  "7000 -5 negative size\n"
				  "-8000 10 negative start\n"
				  "a000 100 old\n"
				  "a080 100 new over the tail\n"
				  "b010 10 small\n"
				  "b000 100 big later\n"
				  "fffffffffffffff0 20 wraps\n"
				  "d000\t8\ttabs\n"
				  "11112222333344445 10 seventeen digits\n"
				  "9000 10 unterminated";
	struct perf_map *pm = NULL;

	CHECK_EQ(write_file(tmp_path("perf-1.map"), map), 0);
	CHECK_EQ(perf_map__load(tmp_path("perf-1.map"), &pm), 0);
	CHECK_LOOKUP(pm, 0xfff, NULL, 0);
	CHECK_LOOKUP(pm, 0x1000, "first func", 0x1000);
	CHECK_LOOKUP(pm, 0x104f, "first func", 0x1000);
	CHECK_LOOKUP(pm, 0x1050, "re-emitted inside first", 0x1050);
	CHECK_LOOKUP(pm, 0x106f, "re-emitted inside first", 0x1050);
	/* The earlier entry still owns what the later one did not cover, under its own start. */
	CHECK_LOOKUP(pm, 0x1070, "first func", 0x1000);
	CHECK_LOOKUP(pm, 0x10ff, "first func", 0x1000);
	CHECK_LOOKUP(pm, 0x1100, NULL, 0);
	CHECK_LOOKUP(pm, 0x2000, "second with  spaces", 0x2000);
	CHECK_LOOKUP(pm, 0x207f, "second with  spaces", 0x2000);
	CHECK_LOOKUP(pm, 0x2080, NULL, 0);
	CHECK_LOOKUP(pm, 0x3000, "third again", 0x3000);
	CHECK_LOOKUP(pm, 0x300f, "third again", 0x3000);
	CHECK_LOOKUP(pm, 0x3010, NULL, 0);
	CHECK_LOOKUP(pm, 0x4000, NULL, 0);
	CHECK_LOOKUP(pm, 0x5000, NULL, 0);
	CHECK_LOOKUP(pm, 0x5100, NULL, 0);
	CHECK_LOOKUP(pm, 0x6000, "hex prefixed", 0x6000);
	CHECK_LOOKUP(pm, 0x601f, "hex prefixed", 0x6000);
	CHECK_LOOKUP(pm, 0x7000, NULL, 0);
	CHECK_LOOKUP(pm, 0x8000, NULL, 0);
	CHECK_LOOKUP(pm, 0x9000, NULL, 0);
	CHECK_LOOKUP(pm, 0xa07f, "old", 0xa000);
	CHECK_LOOKUP(pm, 0xa080, "new over the tail", 0xa080);
	CHECK_LOOKUP(pm, 0xa17f, "new over the tail", 0xa080);
	CHECK_LOOKUP(pm, 0xa180, NULL, 0);
	CHECK_LOOKUP(pm, 0xb000, "big later", 0xb000);
	CHECK_LOOKUP(pm, 0xb015, "big later", 0xb000);
	CHECK_LOOKUP(pm, 0xb0ff, "big later", 0xb000);
	CHECK_LOOKUP(pm, 0xc00f, "crlf", 0xc000);
	CHECK_LOOKUP(pm, 0xd007, "tabs", 0xd000);
	CHECK_LOOKUP(pm, 0xfffffffffffffff8, NULL, 0);
	CHECK_LOOKUP(pm, 0x1111222233334444, NULL, 0);
	/* first (split in two) + re-emitted, second, third again, hex, old, new, big, crlf, tabs */
	CHECK_EQ(perf_map__nr_ranges(pm), 11);
	CHECK(perf_map__bytes(pm) > 0);
	CHECK(!perf_map__lookup(NULL, 0x1000, NULL));
out:
	perf_map__free(pm);
	unlink(tmp_path("perf-1.map"));
}

TEST(missing_and_empty)
{
	struct perf_map *pm = (void *)1;

	CHECK_EQ(perf_map__load(tmp_path("perf-404.map"), &pm), -ENOENT);
	CHECK(pm == NULL);
	CHECK_EQ(write_file(tmp_path("perf-2.map"), ""), 0);
	CHECK_EQ(perf_map__load(tmp_path("perf-2.map"), &pm), 0);
	unlink(tmp_path("perf-2.map"));
	CHECK_EQ(perf_map__nr_ranges(pm), 0);
	CHECK(!perf_map__lookup(pm, 0, NULL));
	CHECK(!perf_map__lookup(pm, UINT64_MAX, NULL));
	perf_map__free(pm);
	perf_map__free(NULL);
}

/* 1,000,000 entries are kept, the ones after are not. */
TEST(entry_bound)
{
	const uint64_t total = 1000000 + 10;
	struct perf_map *pm = NULL;
	FILE *f;

	f = fopen(tmp_path("perf-3.map"), "w");
	CHECK(f);
	for (uint64_t i = 0; i < total; i++)
		fprintf(f, "%" PRIx64 " 10 f%" PRIu64 "\n", 0x100000 + 0x10 * i, i);
	CHECK(fclose(f) == 0);
	CHECK_EQ(perf_map__load(tmp_path("perf-3.map"), &pm), 0);
	unlink(tmp_path("perf-3.map"));
	CHECK_LOOKUP(pm, 0x100000, "f0", 0x100000);
	CHECK_LOOKUP(pm, 0x100000 + 0x10 * 999999 + 5, "f999999", 0x100000 + 0x10 * 999999);
	CHECK_LOOKUP(pm, 0x100000 + 0x10 * 1000000, NULL, 0);
	CHECK_EQ(perf_map__nr_ranges(pm), 1000000);
out:
	perf_map__free(pm);
}

/* Lines longer than 64 KiB are skipped without being held, whatever follows them is read. */
TEST(long_lines)
{
	struct perf_map *pm = NULL;
	FILE *f;

	f = fopen(tmp_path("perf-6.map"), "w");
	CHECK(f);
	fprintf(f, "1000 10 a\n2000 10 ");
	for (int i = 0; i < 200 * 1024; i++)
		fputc('x', f);
	/* The longest line kept: 64 KiB with its newline. */
	fprintf(f, "\n3000 10 c\n4000 10 ");
	for (size_t i = strlen("4000 10 "); i < 64 * 1024 - 1; i++)
		fputc('d', f);
	fprintf(f, "\n5000 10 e\n6000 10 f");
	CHECK(fclose(f) == 0);
	CHECK_EQ(perf_map__load(tmp_path("perf-6.map"), &pm), 0);
	unlink(tmp_path("perf-6.map"));
	CHECK_LOOKUP(pm, 0x1000, "a", 0x1000);
	CHECK_LOOKUP(pm, 0x2000, NULL, 0);
	CHECK_LOOKUP(pm, 0x3000, "c", 0x3000);
	CHECK(perf_map__lookup(pm, 0x4000, NULL) &&
	      strlen(perf_map__lookup(pm, 0x4000, NULL)) == 64 * 1024 - 1 - strlen("4000 10 "));
	CHECK_LOOKUP(pm, 0x5000, "e", 0x5000);
	/* Not complete: the writer may be mid-line. */
	CHECK_LOOKUP(pm, 0x6000, NULL, 0);
	CHECK_EQ(perf_map__nr_ranges(pm), 4);
	perf_map__free(pm);
	pm = NULL;
	/* A device (a link to /dev/zero in a container, say) is not a perf map: refused unread. */
	CHECK_EQ(perf_map__load("/dev/zero", &pm), -EINVAL);
	CHECK(!pm);
out:
	perf_map__free(pm);
}

struct map_line {
	uint64_t start, size;
	char name[256];
};

/* node's own map: a JS entry of the hot function, looked up at its start and last byte. */
TEST(node_perf_basic_prof)
{
	static const char script[] =
	    "function autoprofHotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; "
	    "return s; } "
	    "const t = Date.now(); let x = 0; "
	    "while (Date.now() - t < 1000) x += autoprofHotLoop(100000); "
	    "console.log(process.pid, x > 0);";
	char cmd[PATH_MAX + 1024], line[1024], path[64] = "";
	struct map_line *lines = NULL;
	struct perf_map *pm = NULL;
	size_t nr = 0, alloc = 0;
	ssize_t found = -1;
	int pid = 0;
	FILE *p;

	if (system("node --version >/dev/null 2>&1"))
		SKIP("no node");
	/* --perf-basic-prof also starts V8's log, by default as isolate-*.log in the cwd. */
	snprintf(cmd, sizeof(cmd),
		 "node --perf-basic-prof --no-logfile-per-isolate --logfile=%s -e '%s' 2>&1",
		 tmp_path("v8.log"), script);
	p = popen(cmd, "r");
	CHECK(p);
	if (fgets(line, sizeof(line), p))
		pid = atoi(line);
	pclose(p);
	unlink(tmp_path("v8.log"));
	CHECK(pid > 0);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);

	/* The reference: the file read line by line, independently of the parser. */
	p = fopen(path, "r");
	if (!p) {
		FAILF("%s: %s", path, strerror(errno));
		goto out;
	}
	while (fgets(line, sizeof(line), p)) {
		struct map_line l;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %255[^\n]", &l.start, &l.size, l.name) !=
		    3)
			continue;
		if (nr == alloc) {
			struct map_line *tmp;

			alloc = alloc ? 2 * alloc : 1024;
			tmp = realloc(lines, alloc * sizeof(*lines));
			if (!tmp)
				break;
			lines = tmp;
		}
		lines[nr++] = l;
	}
	fclose(p);
	/* A JS entry of the hot function that no later line overlaps (the later line would win). */
	for (size_t i = 0; i < nr && found < 0; i++) {
		bool overlapped = false;

		if (!strstr(lines[i].name, "autoprofHotLoop") ||
		    (strncmp(lines[i].name, "JS:", 3) &&
		     strncmp(lines[i].name, "LazyCompile:", 12)))
			continue;
		for (size_t j = i + 1; j < nr && !overlapped; j++)
			overlapped = lines[j].start < lines[i].start + lines[i].size &&
				     lines[i].start < lines[j].start + lines[j].size;
		if (!overlapped)
			found = (ssize_t)i;
	}
	if (found < 0) {
		FAILF("%s: no JS entry for autoprofHotLoop among %zu lines", path, nr);
		goto out;
	}
	if (perf_map__load(path, &pm)) {
		FAILF("perf_map__load(%s) failed", path);
		goto out;
	}
	CHECK_LOOKUP(pm, lines[found].start, lines[found].name, lines[found].start);
	CHECK_LOOKUP(pm, lines[found].start + lines[found].size - 1, lines[found].name,
		     lines[found].start);
	if (perf_map__nr_ranges(pm) < 100)
		FAILF("%s: only %zu ranges", path, perf_map__nr_ranges(pm));
out:
	perf_map__free(pm);
	free(lines);
	unlink(path);
}

/* Names from the runtimes, split into what users see; anything else passes whole. */
#define CHECK_SPLIT(raw, want_fn, want_file, want_line)                                                 \
	do {                                                                             \
		struct jit_name _j;                                                      \
		char _fn[256], _file[256];                                               \
                                                                                         \
		jit_name__split(raw, &_j);                                               \
		snprintf(_fn, sizeof(_fn), "%.*s", (int)_j.function_len, _j.function);   \
		snprintf(_file, sizeof(_file), "%.*s", _j.file ? (int)_j.file_len : 0,   \
			 _j.file ? _j.file : "");                                        \
		CHECK_STR(_fn, want_fn);                                                 \
		CHECK_STR(_file, want_file);                                             \
		CHECK_EQ(_j.line, want_line);                                            \
	} while (0)

TEST(jit_names)
{
	CHECK_SPLIT("JS:*hotFn /tmp/jv/hot.js:1:15", "hotFn", "/tmp/jv/hot.js", 1);
	CHECK_SPLIT("JS:~hotFn /tmp/jv/hot.js:12:3", "hotFn", "/tmp/jv/hot.js", 12);
	CHECK_SPLIT("LazyCompile:*a.b /srv/app.js:7:1", "a.b", "/srv/app.js", 7);
	CHECK_SPLIT("JS:^run node:internal/main/run_main_module:23:48", "run",
		    "node:internal/main/run_main_module", 23);
	CHECK_SPLIT("JS:~ /srv/app.js:3:10", "(anonymous)", "/srv/app.js", 3);
	/* A space in the file would be ambiguous: V8 does not quote, so the last word is taken. */
	CHECK_SPLIT("Function:+get x /a/c.js:4:2", "get x", "/a/c.js", 4);
	CHECK_SPLIT("Builtin:InterpreterEntryTrampoline", "Builtin:InterpreterEntryTrampoline", "", 0);
	CHECK_SPLIT("JS:~f /no/position", "JS:~f /no/position", "", 0);
	CHECK_SPLIT("void Hot.spinHot(long)", "Hot.spinHot", "", 0);
	CHECK_SPLIT("java.lang.Object java.lang.invoke.MethodHandle.linkToStatic(java.lang.Object, "
		    "java.lang.invoke.MemberName)",
		    "java.lang.invoke.MethodHandle.linkToStatic", "", 0);
	CHECK_SPLIT("int[] a.B$C.<init>(int)", "a.B$C.<init>", "", 0);
	CHECK_SPLIT("Interpreter", "Interpreter", "", 0);
	CHECK_SPLIT("I2C/C2I adapters", "I2C/C2I adapters", "", 0);
	CHECK_SPLIT("throw_div0_exception Runtime1 stub", "throw_div0_exception Runtime1 stub", "",
		    0);
	CHECK_SPLIT("not java(x)", "not java(x)", "", 0);
	CHECK_SPLIT("", "", "", 0);
}

/* Loading relative to a directory descriptor, as autoprof does for another mount namespace. */
TEST(load_at)
{
	struct perf_map *pm = NULL;
	int dirfd;

	CHECK(!write_file(tmp_path("perf-4.map"), "1000 10 void Hot.spinHot(long)\n"));
	dirfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dirfd >= 0);
	CHECK_EQ(perf_map__load_at(dirfd, "perf-4.map", 0, &pm), 0);
	CHECK(lookup_is(pm, 0x100f, "void Hot.spinHot(long)", 0x1000));
	perf_map__free(pm);
	CHECK_EQ(perf_map__load_at(dirfd, "perf-5.map", 0, &pm), -ENOENT);
	close(dirfd);
	CHECK(!pm);
	unlink(tmp_path("perf-4.map"));
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(handwritten);
	RUN(missing_and_empty);
	RUN(entry_bound);
	RUN(long_lines);
	RUN(node_perf_basic_prof);
	RUN(jit_names);
	RUN(load_at);
	rmdir(tmpdir);
	return test_summary();
}
