/* DEPS: src/lib/procmaps.c src/lib/log.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/* /proc/PID/maps parsing: every line shape the kernel prints, and this process's own maps. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>

#include "src/lib/procmaps.h"
#include "testlib.h"

struct line_case {
	const char *line;
	struct map_entry want;
};

static const struct line_case cases[] = {
    {"7f12a000-7f12b000 r-xp 00001000 fd:01 123456   /usr/lib/libc.so.6\n",
     {0x7f12a000, 0x7f12b000, 0x1000, 0xfd, 0x01, 123456, true, false, true, false, false,
      "/usr/lib/libc.so.6"}},
    {"7f0000001000-7f0000003000 rw-s 0000a000 00:05 99                 "
     "/tmp/my lib with spaces.so (deleted)\n",
     {0x7f0000001000, 0x7f0000003000, 0xa000, 0, 5, 99, true, true, false, true, true,
      "/tmp/my lib with spaces.so"}},
    {"7ffd12340000-7ffd12342000 r-xp 00000000 00:00 0                          [vdso]\n",
     {0x7ffd12340000, 0x7ffd12342000, 0, 0, 0, 0, true, false, true, false, false, "[vdso]"}},
    {"7f0000000000-7f0000001000 rwxp 00000000 00:00 0                          "
     "[anon:jit code]\n",
     {0x7f0000000000, 0x7f0000001000, 0, 0, 0, 0, true, true, true, false, false,
      "[anon:jit code]"}},
    /* The kernel ends an anonymous line right after the inode and its space. */
    {"55e0f0000000-55e0f0021000 rw-p 00000000 00:00 0 \n",
     {0x55e0f0000000, 0x55e0f0021000, 0, 0, 0, 0, true, true, false, false, false, ""}},
    {"55e0f0000000-55e0f0021000 ---p 00000000 00:00 0",
     {0x55e0f0000000, 0x55e0f0021000, 0, 0, 0, 0, false, false, false, false, false, ""}},
    {"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
     {0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, false, false, true, false, false,
      "[vsyscall]"}},
    /* Only a trailing " (deleted)" marks a deleted file. */
    {"400000-401000 r-xp 00000000 103:02 4294967296 /opt/x (deleted)/bin\n",
     {0x400000, 0x401000, 0, 0x103, 0x02, 4294967296ull, true, false, true, false, false,
      "/opt/x (deleted)/bin"}},
};

TEST(parses_line_shapes)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct map_entry *w = &cases[i].want;
		struct map_entry e;
		char line[256];

		snprintf(line, sizeof(line), "%s", cases[i].line);
		CHECK_EQ(maps__parse_line(line, &e), 0);
		CHECK_EQ(e.start, w->start);
		CHECK_EQ(e.end, w->end);
		CHECK_EQ(e.pgoff, w->pgoff);
		CHECK_EQ(e.dev_major, w->dev_major);
		CHECK_EQ(e.dev_minor, w->dev_minor);
		CHECK_EQ(e.inode, w->inode);
		CHECK_EQ(e.readable, w->readable);
		CHECK_EQ(e.writable, w->writable);
		CHECK_EQ(e.executable, w->executable);
		CHECK_EQ(e.shared, w->shared);
		CHECK_EQ(e.deleted, w->deleted);
		CHECK_STR(e.path, w->path);
		/* path points into the caller's buffer, not a copy. */
		CHECK(e.path >= line && e.path < line + sizeof(line));
	}
}

TEST(rejects_malformed_lines)
{
	static const char *const bad[] = {
	    "",
	    "\n",
	    "garbage",
	    "7f12a000 r-xp 00001000 fd:01 123456 /x",
	    "7f12b000-7f12a000 r-xp 00001000 fd:01 123456 /x",
	    "7f12a000-7f12b000 r-xp",
	    "7f12a000-7f12b000 r-xp 00001000 fd01 123456 /x",
	    "7f12a000-7f12b000 r-xp 00001000 fd:01 /x",
	    "7f12a000-7f12b000 r-xp 0000z000 fd:01 1 /x",
	    "-7f12b000 r-xp 00001000 fd:01 1 /x",
	    "17f12a00000000000-27f12b00000000000 r-xp 00001000 fd:01 1 /x",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct map_entry e;
		char line[128];

		snprintf(line, sizeof(line), "%s", bad[i]);
		if (maps__parse_line(line, &e) != -EINVAL) {
			FAILF("accepted \"%s\"", bad[i]);
			return;
		}
	}
}

struct self_scan {
	char exe[PATH_MAX];
	uint64_t code;
	int nr, nr_not_exec, found;
};

static int self_scan__cb(const struct map_entry *e, void *ctx)
{
	struct self_scan *s = ctx;

	s->nr++;
	if (!e->executable)
		s->nr_not_exec++;
	if (!strcmp(e->path, s->exe) && s->code >= e->start && s->code < e->end && e->inode)
		s->found++;
	return 0;
}

TEST(finds_own_executable)
{
	struct self_scan s = {.code = (uintptr_t)&self_scan__cb};
	ssize_t n;

	n = readlink("/proc/self/exe", s.exe, sizeof(s.exe) - 1);
	CHECK(n > 0);
	s.exe[n] = '\0';
	CHECK_EQ(maps__for_each(getpid(), true, self_scan__cb, &s), 0);
	CHECK(s.nr >= 2);
	CHECK_EQ(s.nr_not_exec, 0);
	CHECK_EQ(s.found, 1);

	/* Without exec_only the data mappings come too. */
	s.nr = s.nr_not_exec = s.found = 0;
	CHECK_EQ(maps__for_each(getpid(), false, self_scan__cb, &s), 0);
	CHECK(s.nr_not_exec > 0);
	CHECK_EQ(s.found, 1);
}

static int stop_cb(const struct map_entry *e, void *ctx)
{
	(void)e;
	++*(int *)ctx;
	return 42;
}

TEST(callback_stops_walk)
{
	int calls = 0;

	CHECK_EQ(maps__for_each(getpid(), false, stop_cb, &calls), 42);
	CHECK_EQ(calls, 1);
}

TEST(gone_process)
{
	int calls = 0;

	/* Above any pid_max the kernel allows (4194304). */
	CHECK_EQ(maps__for_each(INT_MAX, false, stop_cb, &calls), -ENOENT);
	CHECK_EQ(calls, 0);
}

int main(void)
{
	RUN(parses_line_shapes);
	RUN(rejects_malformed_lines);
	RUN(finds_own_executable);
	RUN(callback_stops_walk);
	RUN(gone_process);
	return test_summary();
}
