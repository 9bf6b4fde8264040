/* DEPS: src/lib/ufile.c src/lib/log.c src/lib/strtab.c src/symbolize/objsym.c src/symbolize/elf.c src/symbolize/dwarf.c src/symbolize/dwarf_cu.c src/lib/array.c src/symbolize/gosym.c src/symbolize/debuginfo.c src/symbolize/demangle.c src/symbolize/perfmap.c src/unwind/cfi.c src/unwind/cfi_builder.c src/unwind/gocfi.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Files that others control (ufile.h): what a user or a container can plant where autoprof
 * looks (a FIFO, a device, a symlink out of the root, a file of another owner, a huge file) is
 * refused without blocking and counted; and an object truncated while autoprof holds it gives
 * errors, never SIGBUS.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/ufile.h"
#include "symbolize/gosym.h"
#include "symbolize/objsym.h"
#include "symbolize/perfmap.h"
#include "unwind/cfi.h"
#include "testlib.h"

static char dir[64];

static const char *at(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/fixtures/%s", build && *build ? build : "build", name);
	return path;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static uint64_t count(enum ufile_reason r)
{
	uint64_t n[UFILE_NR_REASONS];

	ufile__stats(n);
	return n[r];
}

/* The root the tests resolve in: dir, as a process's /proc/PID/root would be. */
static int root_fd(void)
{
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

TEST(regular_file_opens)
{
	const struct ufile_how how = { .max_size = 100 };
	struct stat st;
	int root = root_fd(), fd;

	write_file(at("plain"), "hello\n");
	fd = ufile__openat(root, "/plain", &how, &st);
	close(root);
	CHECK(fd >= 0);
	CHECK_EQ(st.st_size, 6);
	/* O_NONBLOCK was for the open only. */
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
}

/* A FIFO blocks a plain open() until a writer comes: here it must not even block. */
TEST(fifo_refused_without_blocking)
{
	const struct ufile_how how = {0};
	uint64_t before = count(UFILE_NOT_REGULAR);
	int root = root_fd(), fd;

	CHECK(!mkfifo(at("fifo"), 0666));
	alarm(5); /* a regression hangs: fail by SIGALRM rather than stall the suite */
	fd = ufile__openat(root, "fifo", &how, NULL);
	alarm(0);
	close(root);
	CHECK_EQ(fd, -EINVAL);
	CHECK_EQ(count(UFILE_NOT_REGULAR), before + 1);
}

TEST(directory_and_device_refused)
{
	const struct ufile_how how = {0};
	uint64_t before = count(UFILE_NOT_REGULAR);
	int root = root_fd();

	CHECK(!mkdir(at("sub"), 0755));
	CHECK_EQ(ufile__openat(root, "sub", &how, NULL), -EINVAL);
	close(root);
	CHECK_EQ(ufile__open_magic("/dev/zero", &how, NULL), -EINVAL);
	CHECK_EQ(count(UFILE_NOT_REGULAR), before + 2);
}

TEST(too_large_refused)
{
	const struct ufile_how how = { .max_size = 5 };
	uint64_t before = count(UFILE_TOO_LARGE);
	int root = root_fd();

	write_file(at("big"), "123456");
	CHECK_EQ(ufile__openat(root, "big", &how, NULL), -EFBIG);
	close(root);
	CHECK_EQ(count(UFILE_TOO_LARGE), before + 1);
}

/* An absolute symlink in a container names the container's file, not the host's. */
TEST(symlink_resolves_inside_root)
{
	const struct ufile_how how = {0};
	int root = root_fd(), fd;
	char buf[16] = "";

	CHECK(!mkdir(at("etc"), 0755));
	write_file(at("etc/passwd"), "inside\n");
	CHECK(!symlink("/etc/passwd", at("link")));
	/* And ".." does not climb out of it. */
	CHECK(!symlink("../../../../../../dev/zero", at("updev")));
	fd = ufile__openat(root, "link", &how, NULL);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, buf, sizeof(buf) - 1), 7);
	close(fd);
	CHECK_STR(buf, "inside\n");
	CHECK_EQ(ufile__openat(root, "updev", &how, NULL), -ENOENT);
	close(root);
}

/* A container's /tmp that is a symlink to /etc names its own /etc (the JVM's attach files). */
TEST(opendir_resolves_inside_root)
{
	int root = root_fd(), tmp, fd;

	CHECK(!symlink("/etc", at("tmp")));
	tmp = ufile__opendir(root, "tmp");
	close(root);
	CHECK(tmp >= 0);
	fd = openat(tmp, "passwd", O_RDONLY | O_CLOEXEC);
	close(tmp);
	CHECK(fd >= 0);
	char buf[16] = "";
	CHECK_EQ(read(fd, buf, sizeof(buf) - 1), 7);
	close(fd);
	CHECK_STR(buf, "inside\n");
}

TEST(symlink_refused_when_asked)
{
	const struct ufile_how how = { .flags = UFILE_F_NO_SYMLINKS };
	uint64_t before = count(UFILE_SYMLINK);
	int root = root_fd();

	CHECK_EQ(ufile__openat(root, "link", &how, NULL), -ELOOP);
	close(root);
	CHECK_EQ(count(UFILE_SYMLINK), before + 1);
}

TEST(owner_checked)
{
	struct ufile_how how = { .flags = UFILE_F_OWNER, .owner = 1234 };
	uint64_t before = count(UFILE_OWNER);
	int root = root_fd(), fd;

	write_file(at("owned"), "x\n");
	CHECK(!chown(at("owned"), 4321, 4321));
	CHECK_EQ(ufile__openat(root, "owned", &how, NULL), -EPERM);
	CHECK_EQ(count(UFILE_OWNER), before + 1);
	how.owner = 4321;
	fd = ufile__openat(root, "owned", &how, NULL);
	CHECK(fd >= 0);
	close(fd);
	/* Root's files are taken: the process cannot have planted them. */
	how.owner = 1234;
	fd = ufile__openat(root, "plain", &how, NULL);
	close(root);
	CHECK(fd >= 0);
	close(fd);
}

/* A perf map of 10 MB without a newline: read within its line buffer, skipped and counted. */
TEST(perf_map_overlong_line)
{
	uint64_t before = count(UFILE_OVERLONG_LINE);
	struct perf_map *pm = NULL;
	int root = root_fd(), fd;
	char *junk = malloc(10 << 20);

	CHECK(junk);
	memset(junk, 'a', 10 << 20);
	fd = open(at("perf-1.map"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, junk, 10 << 20), 10 << 20);
	CHECK_EQ(write(fd, "\n10 20 after\n", 13), 13);
	close(fd);
	free(junk);
	CHECK_EQ(perf_map__load_at(root, "perf-1.map", 0, &pm), 0);
	close(root);
	CHECK_EQ(count(UFILE_OVERLONG_LINE), before + 1);
	/* The line after it is still read. */
	CHECK_STR(perf_map__lookup(pm, 0x18, NULL), "after");
	perf_map__free(pm);
}

TEST(perf_map_symlink_refused)
{
	uint64_t before = count(UFILE_SYMLINK);
	struct perf_map *pm = NULL;
	int root = root_fd();

	write_file(at("secret"), "0 ffffffffffff SECRET_SYMBOL\n");
	CHECK(!chmod(at("secret"), 0600));
	CHECK(!symlink("secret", at("perf-2.map")));
	CHECK_EQ(perf_map__load_at(root, "perf-2.map", 0, &pm), -ELOOP);
	close(root);
	CHECK(!pm);
	CHECK_EQ(count(UFILE_SYMLINK), before + 1);
}

/* Copies fixture name to dir and opens the copy. */
static int copy_fixture(const char *name, const char *to)
{
	char cmd[2 * PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "cp %s %s", fixture(name), at(to));
	if (system(cmd))
		return -1;
	return open(at(to), O_RDONLY | O_CLOEXEC);
}

/*
 * An object truncated by its owner after autoprof loaded it: lookups that read its DWARF
 * then must not touch pages past the new end (a mapped file's missing page is SIGBUS). Run in
 * a child, so that a SIGBUS is a failure rather than the end of the suite.
 */
TEST(truncated_after_load_no_sigbus)
{
	struct objsym *os = NULL;
	int fd, status;
	pid_t child;

	fd = copy_fixture("inlines", "inlines-copy");
	CHECK(fd >= 0);
	CHECK_EQ(objsym__load(fd, -1, &os), 0);
	CHECK(!ftruncate(fd, 0) || !truncate(at("inlines-copy"), 0));
	child = fork();
	if (!child) {
		const struct objsym_frame *fr;

		for (uint64_t off = 0; off < (1 << 16); off += 4)
			objsym__lookup(os, off, &fr);
		_exit(0);
	}
	CHECK(child > 0);
	CHECK_EQ(waitpid(child, &status, 0), child);
	objsym__free(os);
	close(fd);
	if (WIFSIGNALED(status))
		FAILF("lookups after truncation: killed by signal %d", WTERMSIG(status));
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status));
}

/* Truncated before it is read: every reader fails cleanly. */
TEST(truncated_before_read_errors)
{
	struct objsym *os = NULL;
	struct go_symtab *go = NULL;
	struct cfi_table t;
	struct stat st;
	int fd;

	fd = copy_fixture("gohello", "go-copy");
	CHECK(fd >= 0 && !fstat(fd, &st));
	CHECK(!truncate(at("go-copy"), st.st_size / 2));
	CHECK(go_symtab__open(fd, &go) < 0);
	close(fd);

	fd = copy_fixture("cfi-c", "cfi-copy");
	CHECK(fd >= 0 && !fstat(fd, &st));
	CHECK(!truncate(at("cfi-copy"), st.st_size / 8));
	/* Unreadable CFI is as none: a table of no rows (frame pointers only). */
	CHECK(cfi__build(fd, &t) < 0 || !t.nr);
	cfi_table__release(&t);
	close(fd);

	fd = copy_fixture("inlines", "inl-copy");
	CHECK(fd >= 0 && !fstat(fd, &st));
	CHECK(!truncate(at("inl-copy"), st.st_size / 8));
	/* Its symbol table is past the end: loaded with none, or not loaded. */
	if (!objsym__load(fd, -1, &os)) {
		const struct objsym_frame *fr;

		for (uint64_t off = 0; off < (1 << 16); off += 4)
			objsym__lookup(os, off, &fr);
		objsym__free(os);
	}
	close(fd);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/autoprof-ufile-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(regular_file_opens);
	RUN(fifo_refused_without_blocking);
	RUN(directory_and_device_refused);
	RUN(too_large_refused);
	RUN(symlink_resolves_inside_root);
	RUN(opendir_resolves_inside_root);
	RUN(symlink_refused_when_asked);
	RUN(owner_checked);
	RUN(perf_map_overlong_line);
	RUN(perf_map_symlink_refused);
	RUN(truncated_after_load_no_sigbus);
	RUN(truncated_before_read_errors);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return test_summary();
}
