/* DEPS: src/proc/container.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Container IDs from a process's cgroup file, and their cache by the key of its cgroups at exec
 * (src/proc/container.c). A directory of the test's own stands in for /proc/PID: its "cgroup"
 * file is written with the lines a hybrid host's kernel gives, so a cached answer shows as the
 * old ID after the file changed. The counters BPF keeps are plain variables here.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/proc/container.h"
#include "testlib.h"

#define ID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static char dir[64];
static int dirfd_ = -1;

static void write_cgroup(const char *text)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup", dir);
	f = fopen(path, "w");
	CHECK(f);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_container.XXXXXX");
	CHECK(mkdtemp(dir));
	dirfd_ = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(dirfd_ >= 0);
}

static void teardown(void)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/cgroup", dir);
	unlink(path);
	close(dirfd_);
	rmdir(dir);
}

/* What the ID is read as: the last run of exactly 64 lowercase hex digits in the file. */
TEST(id_is_last_run_of_64_hex_digits)
{
	struct container_stats s;
	char id[CONTAINER_ID_LEN + 1];

	setup();
	write_cgroup("12:memory:/docker/" ID_A "\n0::/system.slice/docker-" ID_B ".scope\n");
	container_ids__get(NULL, dirfd_, 0, 0, id);
	CHECK_STR(id, ID_B);
	/* Too long a run (65 digits), too short (a 32-digit pod UID), upper case: none. */
	write_cgroup("4:memory:/process_api/8055e8d4ac0e8a389bf7f5fdb18fa0e0\n"
		     "1:cpu:/x/" ID_A "0\n0::/"
		     "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\n");
	container_ids__get(NULL, dirfd_, 0, 0, id);
	CHECK_STR(id, "");
	/* Nested (Docker in Docker): the innermost, last on its line. */
	write_cgroup("0::/docker/" ID_A "/docker/" ID_B "\n");
	container_ids__get(NULL, dirfd_, 0, 0, id);
	CHECK_STR(id, ID_B);
	/* No file (the process is gone): none, and nothing kept. */
	teardown();
	setup();
	{
		struct container_ids *c = container_ids__new();
		uint64_t moves = 0, renames = 0;

		container_ids__watch(c, &moves, &renames);
		container_ids__get(c, dirfd_, 7, 0, id);
		CHECK_STR(id, "");
		write_cgroup("0::/docker/" ID_A "\n");
		container_ids__get(c, dirfd_, 7, 0, id);
		container_ids__stats(c, &s);
		CHECK_STR(id, ID_A);
		CHECK_EQ(s.reads, 2);
		container_ids__free(c);
	}
	teardown();
}

TEST(same_key_reads_once)
{
	struct container_ids *c = container_ids__new();
	uint64_t moves = 3, renames = 0;
	struct container_stats s;
	char id[CONTAINER_ID_LEN + 1];

	setup();
	container_ids__watch(c, &moves, &renames);
	write_cgroup("0::/docker-" ID_A ".scope\n");
	container_ids__get(c, dirfd_, 42, 3, id);
	CHECK_STR(id, ID_A);
	/* The file now says B, but key 42 was A's: from the cache. */
	write_cgroup("0::/docker-" ID_B ".scope\n");
	container_ids__get(c, dirfd_, 42, 3, id);
	CHECK_STR(id, ID_A);
	/* Another key reads. */
	container_ids__get(c, dirfd_, 43, 3, id);
	CHECK_STR(id, ID_B);
	/* Key 0 (not known: a process found by a scan) always reads. */
	write_cgroup("0::/\n");
	container_ids__get(c, dirfd_, 0, 3, id);
	CHECK_STR(id, "");
	/* An ID of none is kept too: the host's own processes are most execs. */
	container_ids__get(c, dirfd_, 44, 3, id);
	write_cgroup("0::/docker-" ID_A ".scope\n");
	container_ids__get(c, dirfd_, 44, 3, id);
	CHECK_STR(id, "");
	container_ids__stats(c, &s);
	CHECK_EQ(s.reads, 4);
	CHECK_EQ(s.cached, 2);
	CHECK_EQ(s.unkept, 0);
	container_ids__free(c);
	teardown();
}

/* A task moved between the exec (its key) and the read: the file may be of other cgroups. */
TEST(move_since_exec_is_not_kept)
{
	struct container_ids *c = container_ids__new();
	uint64_t moves = 5, renames = 0;
	struct container_stats s;
	char id[CONTAINER_ID_LEN + 1];

	setup();
	container_ids__watch(c, &moves, &renames);
	write_cgroup("0::/docker-" ID_B ".scope\n");
	/* Its exec saw 4 moves; 5 now. */
	container_ids__get(c, dirfd_, 42, 4, id);
	CHECK_STR(id, ID_B);
	write_cgroup("0::/docker-" ID_A ".scope\n");
	container_ids__get(c, dirfd_, 42, 5, id);
	CHECK_STR(id, ID_A);
	/* That one was kept. */
	write_cgroup("0::/\n");
	container_ids__get(c, dirfd_, 42, 5, id);
	CHECK_STR(id, ID_A);
	container_ids__stats(c, &s);
	CHECK_EQ(s.reads, 2);
	CHECK_EQ(s.unkept, 1);
	CHECK_EQ(s.cached, 1);
	container_ids__free(c);
	teardown();
}

/* A renamed cgroup (v1) changes the path under an unchanged key: everything is read again. */
TEST(rename_forgets_everything)
{
	struct container_ids *c = container_ids__new();
	uint64_t moves = 0, renames = 0;
	struct container_stats s;
	char id[CONTAINER_ID_LEN + 1];

	setup();
	container_ids__watch(c, &moves, &renames);
	write_cgroup("0::/docker-" ID_A ".scope\n");
	container_ids__get(c, dirfd_, 42, 0, id);
	container_ids__get(c, dirfd_, 77, 0, id);
	write_cgroup("0::/docker-" ID_B ".scope\n");
	renames++;
	container_ids__get(c, dirfd_, 42, 0, id);
	CHECK_STR(id, ID_B);
	container_ids__get(c, dirfd_, 77, 0, id);
	CHECK_STR(id, ID_B);
	container_ids__stats(c, &s);
	CHECK_EQ(s.flushes, 1);
	CHECK_EQ(s.reads, 4);
	CHECK_EQ(s.cached, 0);
	container_ids__free(c);
	teardown();
}

/* Without BPF's counters (never watched, or the collector gone): every process reads. */
TEST(unwatched_keeps_nothing)
{
	struct container_ids *c = container_ids__new();
	uint64_t moves = 0, renames = 0;
	struct container_stats s;
	char id[CONTAINER_ID_LEN + 1];

	setup();
	write_cgroup("0::/docker-" ID_A ".scope\n");
	container_ids__get(c, dirfd_, 42, 0, id);
	container_ids__watch(c, &moves, &renames);
	container_ids__watch(c, NULL, NULL);
	write_cgroup("0::/docker-" ID_B ".scope\n");
	container_ids__get(c, dirfd_, 42, 0, id);
	CHECK_STR(id, ID_B);
	container_ids__stats(c, &s);
	CHECK_EQ(s.reads, 2);
	CHECK_EQ(s.cached, 0);
	container_ids__free(c);
	container_ids__free(NULL);
	teardown();
}

int main(void)
{
	RUN(id_is_last_run_of_64_hex_digits);
	RUN(same_key_reads_once);
	RUN(move_since_exec_is_not_kept);
	RUN(rename_forgets_everything);
	RUN(unwatched_keeps_nothing);
	return test_summary();
}
