/* DEPS: src/symbolize/debuginfo.c src/symbolize/elf.c src/lib/log.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Separate debug files and MiniDebugInfo for the fixtures tests/unit/debuginfo.mk derives from
 * tests/fixtures/debuginfo.c, and for the host's libc when libc6-dbg is installed. A lookup is
 * right when it returns the expected file (same inode), whose build ID is the binary's and whose
 * symbol table names the static function at the address nm gives in the unstripped binary.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debuginfo.h"
#include "symbolize/elf.h"
#include "testlib.h"

#define LOCAL_FN "debuginfo_local_fn"

/* $BUILD/fixtures/debuginfo/NAME, made absolute: bin_path arguments must be. */
static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	char rel[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(rel, sizeof(rel), "%s/fixtures/debuginfo/%s", build && *build ? build : "build",
		 name);
	if (!realpath(rel, path))
		snprintf(path, sizeof(path), "%s", rel);
	return path;
}

static int open_ro(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int build_id_of(const char *path, char *hex, size_t size)
{
	int fd = open_ro(path), err;

	if (fd < 0)
		return -errno;
	err = elf__read_build_id(fd, hex, size);
	close(fd);
	return err;
}

static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * fd is a debug file for binary (the unstripped one): same build ID, and its symbols name func
 * at nm's address in binary. Returns 0, or -1 after FAILF.
 */
static int check_names(int fd, const char *binary, const char *func, bool check_build_id)
{
	char want[256], got[256];
	struct elf_file *ef = NULL;
	uint64_t addr, size, start = 0;
	const char *sym;
	int err;

	if (test_nm_symbol(binary, func, 0, &addr, &size)) {
		FAILF("nm does not list %s in %s", func, binary);
		return -1;
	}
	if (check_build_id) {
		err = build_id_of(binary, want, sizeof(want));
		if (!err)
			err = elf__read_build_id(fd, got, sizeof(got));
		if (err || !want[0] || strcmp(want, got)) {
			FAILF("build ID %.64s, expected %.64s (%s)", err ? "?" : got, want,
			      strerror(-err));
			return -1;
		}
	}
	err = elf_file__open(fd, &ef);
	if (err) {
		FAILF("elf_file__open: %s", strerror(-err));
		return -1;
	}
	sym = elf_file__symbol(ef, addr + size / 2, &start);
	if (!sym || strcmp(sym, func) || start != addr) {
		FAILF("0x%" PRIx64 " names %s@0x%" PRIx64 ", expected %s@0x%" PRIx64,
		      addr + size / 2, sym ? sym : "(null)", start, func, addr);
		elf_file__free(ef);
		return -1;
	}
	elf_file__free(ef);
	return 0;
}

/*
 * Looks up the debug file of fixture bin (mapped as bin_path in root, or at its own path), and
 * checks that it is the file at expect_path that names the static function.
 */
static void check_lookup(const char *root, const char *bin, const char *bin_path,
			 const char *build_id, const char *expect_path)
{
	char bin_real[PATH_MAX], prog[PATH_MAX], expect[PATH_MAX];
	int bin_fd, fd;

	snprintf(bin_real, sizeof(bin_real), "%s", fixture(bin));
	snprintf(prog, sizeof(prog), "%s", fixture("prog"));
	snprintf(expect, sizeof(expect), "%s", expect_path);
	bin_fd = open_ro(bin_real);
	if (bin_fd < 0) {
		FAILF("%.300s: %s", bin_real, strerror(errno));
		return;
	}
	fd = debuginfo__open_debug_file(root, bin_path ? bin_path : bin_real, bin_fd, build_id);
	close(bin_fd);
	if (fd < 0) {
		FAILF("%s: %s", bin, strerror(-fd));
		return;
	}
	if (!same_file(fd, expect))
		FAILF("%s: found another file than %.300s", bin, expect);
	else
		check_names(fd, prog, LOCAL_FN, true);
	close(fd);
}

static int prog_build_id(char *hex, size_t size)
{
	int err = build_id_of(fixture("prog"), hex, size);

	if (!err && !hex[0])
		err = -ENODATA;
	if (err)
		FAILF("build ID of prog: %s", strerror(-err));
	return err;
}

TEST(build_id_path)
{
	char id[256], root[PATH_MAX], expect[PATH_MAX + 300];

	if (prog_build_id(id, sizeof(id)))
		return;
	snprintf(root, sizeof(root), "%s", fixture("root"));
	snprintf(expect, sizeof(expect), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, id,
		 id + 2);
	/* prog-stripped has no debug link: only the build ID can find it. */
	check_lookup(root, "prog-stripped", "/opt/app/prog", id, expect);
}

/* The build ID is upper-case in some tools' output; the .build-id tree is lower-case. */
TEST(build_id_path_upper_case)
{
	char id[256], root[PATH_MAX], expect[PATH_MAX + 300];

	if (prog_build_id(id, sizeof(id)))
		return;
	snprintf(root, sizeof(root), "%s", fixture("root"));
	snprintf(expect, sizeof(expect), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, id,
		 id + 2);
	for (char *c = id; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	check_lookup(root, "prog-stripped", "/opt/app/prog", id, expect);
}

/* A different build's debug file under the right build-ID name is not taken. */
TEST(build_id_path_stale_file_rejected)
{
	char id[256], root[PATH_MAX], path[PATH_MAX + 300];
	int bin_fd, fd;

	if (prog_build_id(id, sizeof(id)))
		return;
	snprintf(root, sizeof(root), "%s", fixture("stale"));
	snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, id, id + 2);
	CHECK(access(path, R_OK) == 0);
	bin_fd = open_ro(fixture("prog-stripped"));
	CHECK(bin_fd >= 0);
	fd = debuginfo__open_debug_file(root, "/opt/app/prog", bin_fd, id);
	close(bin_fd);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(fd, -ENOENT);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open_ro(from), out, err = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			err = -EIO;
			break;
		}
	}
	if (n < 0)
		err = -errno;
	close(in);
	close(out);
	return err;
}

/*
 * Distributions make .build-id entries symlinks, sometimes absolute ones: inside a container's
 * root they must resolve against that root, not the host's.
 */
TEST(build_id_absolute_symlink_resolves_in_root)
{
	char id[256], tmpl[] = "/tmp/debuginfo-root-XXXXXX", dir[PATH_MAX + 300];
	char real[PATH_MAX + 300], link[PATH_MAX + 300];
	char *root;

	if (prog_build_id(id, sizeof(id)))
		return;
	root = mkdtemp(tmpl);
	CHECK(root);
	snprintf(dir, sizeof(dir),
		 "mkdir -p '%s/usr/lib/debug/.build-id/%.2s' '%s/usr/lib/debug/real'", root, id,
		 root);
	if (system(dir)) {
		FAILF("%.300s failed", dir);
		goto out_rm;
	}
	snprintf(real, sizeof(real), "%s/usr/lib/debug/real/prog.debug", root);
	snprintf(link, sizeof(link), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, id, id + 2);
	if (copy_file(fixture("prog.debug"), real) ||
	    symlink("/usr/lib/debug/real/prog.debug", link)) {
		FAILF("cannot populate %s", root);
		goto out_rm;
	}
	check_lookup(root, "prog-stripped", "/opt/app/prog", id, real);
out_rm:
	snprintf(dir, sizeof(dir), "rm -rf '%s'", root);
	if (system(dir))
		FAILF("%.300s failed", dir);
}

TEST(debuglink_beside_binary)
{
	char id[256], expect[PATH_MAX];

	if (prog_build_id(id, sizeof(id)))
		return;
	snprintf(expect, sizeof(expect), "%s", fixture("prog.debug"));
	/* The host has no .build-id entry for the fixture: the lookup falls through to the link. */
	check_lookup("", "prog-linked", NULL, id, expect);
}

TEST(debuglink_dot_debug_dir)
{
	char expect[PATH_MAX];

	snprintf(expect, sizeof(expect), "%s", fixture(".debug/prog-dotdebug.debug"));
	check_lookup(NULL, "prog-dotdebug", NULL, NULL, expect);
}

TEST(debuglink_global_debug_dir)
{
	char root[PATH_MAX], expect[PATH_MAX + 64];

	snprintf(root, sizeof(root), "%s", fixture("root"));
	snprintf(expect, sizeof(expect), "%s/usr/lib/debug/opt/app/prog-global.debug", root);
	check_lookup(root, "prog-global", "/opt/app/prog-global", NULL, expect);
}

TEST(debuglink_wrong_crc_rejected)
{
	char bin[PATH_MAX];
	int bin_fd, fd;

	/* The named file is there; only its CRC is wrong. */
	CHECK(access(fixture("prog-badcrc.debug"), R_OK) == 0);
	snprintf(bin, sizeof(bin), "%s", fixture("prog-badcrc"));
	bin_fd = open_ro(bin);
	CHECK(bin_fd >= 0);
	fd = debuginfo__open_debug_file("", bin, bin_fd, NULL);
	close(bin_fd);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(fd, -ENOENT);
}

TEST(nothing_found)
{
	char id[256], bin[PATH_MAX];
	int bin_fd, fd;

	if (prog_build_id(id, sizeof(id)))
		return;
	snprintf(bin, sizeof(bin), "%s", fixture("prog-stripped"));
	bin_fd = open_ro(bin);
	CHECK(bin_fd >= 0);
	fd = debuginfo__open_debug_file("", bin, bin_fd, id);
	close(bin_fd);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(fd, -ENOENT);
}

TEST(minidebuginfo_names_local_function)
{
	char prog[PATH_MAX];
	struct elf_file *ef = NULL;
	uint64_t addr, size, start;
	const char *sym;
	int bin_fd, fd, err;

	snprintf(prog, sizeof(prog), "%s", fixture("prog"));
	CHECK(test_nm_symbol(prog, LOCAL_FN, 0, &addr, &size) == 0);
	bin_fd = open_ro(fixture("prog-mini"));
	CHECK(bin_fd >= 0);
	/* Stripped: without MiniDebugInfo the function has no name. */
	err = elf_file__open(bin_fd, &ef);
	if (err) {
		close(bin_fd);
		FAILF("elf_file__open(prog-mini): %s", strerror(-err));
		return;
	}
	sym = elf_file__symbol(ef, addr, &start);
	elf_file__free(ef);
	if (sym && !strcmp(sym, LOCAL_FN)) {
		close(bin_fd);
		FAILF("prog-mini is not stripped");
		return;
	}
	fd = debuginfo__open_minidebuginfo(bin_fd);
	close(bin_fd);
	if (fd < 0) {
		FAILF("debuginfo__open_minidebuginfo: %s", strerror(-fd));
		return;
	}
	/* The gdb recipe keeps no notes, hence no build ID, in the embedded file. */
	check_names(fd, prog, LOCAL_FN, false);
	close(fd);
}

static void check_minidebuginfo_error(const char *path, int expect)
{
	int bin_fd = open_ro(path), fd;

	if (bin_fd < 0) {
		FAILF("%s: %s", path, strerror(errno));
		return;
	}
	fd = debuginfo__open_minidebuginfo(bin_fd);
	close(bin_fd);
	if (fd >= 0)
		close(fd);
	if (fd != expect)
		FAILF("%s: got %d (%s), expected %d (%s)", path, fd,
		      fd < 0 ? strerror(-fd) : "an fd", expect, strerror(-expect));
}

TEST(minidebuginfo_absent)
{
	check_minidebuginfo_error(fixture("prog-stripped"), -ENODATA);
}

TEST(minidebuginfo_not_elf)
{
	check_minidebuginfo_error("tests/fixtures/debuginfo.c", -ENOEXEC);
}

TEST(minidebuginfo_corrupt)
{
	check_minidebuginfo_error(fixture("prog-badxz"), -EBADMSG);
}

TEST(minidebuginfo_too_big)
{
	check_minidebuginfo_error(fixture("prog-bigxz"), -EFBIG);
}

/* The path of the libc this test runs with, from /proc/self/maps. */
static int self_libc(char *path, size_t size)
{
	char line[PATH_MAX + 128];
	int err = -ENOENT;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (!p || !strstr(p, "/libc.so.6"))
			continue;
		p[strcspn(p, "\n")] = '\0';
		snprintf(path, size, "%s", p);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

/* libc6-dbg installs libc's full symbol table under the build-ID path. */
TEST(libc_dbg_by_build_id)
{
	char libc[PATH_MAX], id[256], dbg[PATH_MAX];
	uint64_t addr, size, start = 0;
	struct elf_file *ef = NULL;
	const char *sym;
	int bin_fd, fd, err;

	CHECK(self_libc(libc, sizeof(libc)) == 0);
	CHECK(build_id_of(libc, id, sizeof(id)) == 0 && id[0]);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	if (access(dbg, R_OK))
		SKIP("%.300s: no libc6-dbg for this libc", dbg);
	CHECK(test_nm_symbol(dbg, "__libc_start_call_main", 0, &addr, &size) == 0);
	bin_fd = open_ro(libc);
	CHECK(bin_fd >= 0);
	fd = debuginfo__open_debug_file("", libc, bin_fd, id);
	close(bin_fd);
	if (fd < 0) {
		FAILF("%.300s: %s", libc, strerror(-fd));
		return;
	}
	if (!same_file(fd, dbg)) {
		close(fd);
		FAILF("found another file than %.300s", dbg);
		return;
	}
	err = elf_file__open(fd, &ef);
	close(fd);
	if (err) {
		FAILF("elf_file__open(%.300s): %s", dbg, strerror(-err));
		return;
	}
	sym = elf_file__symbol(ef, addr + 1, &start);
	if (!sym || strcmp(sym, "__libc_start_call_main") || start != addr)
		FAILF("0x%" PRIx64 " names %s@0x%" PRIx64
		      ", expected __libc_start_call_main@0x%" PRIx64,
		      addr + 1, sym ? sym : "(null)", start, addr);
	elf_file__free(ef);
}

int main(void)
{
	RUN(build_id_path);
	RUN(build_id_path_upper_case);
	RUN(build_id_path_stale_file_rejected);
	RUN(build_id_absolute_symlink_resolves_in_root);
	RUN(debuglink_beside_binary);
	RUN(debuglink_dot_debug_dir);
	RUN(debuglink_global_debug_dir);
	RUN(debuglink_wrong_crc_rejected);
	RUN(nothing_found);
	RUN(minidebuginfo_names_local_function);
	RUN(minidebuginfo_absent);
	RUN(minidebuginfo_not_elf);
	RUN(minidebuginfo_corrupt);
	RUN(minidebuginfo_too_big);
	RUN(libc_dbg_by_build_id);
	return test_summary();
}
