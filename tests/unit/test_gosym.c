/* DEPS: src/symbolize/gosym.c src/symbolize/elf.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Go function names and source lines from .gopclntab, checked against what the Go toolchain's
 * own nm and addr2line say about the fixtures built by tests/unit/gosym.mk.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/gosym.h"
#include "gopclntab_elf.h"
#include "testlib.h"

#define GO_FUNCS 4
static const char *const go_funcs[GO_FUNCS] = {
    "main.hotLoop",
    "main.(*T).Method",
    "main.helper",
    "main.main",
};

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/fixtures/%s", build && *build ? build : "build", name);
	return path;
}

/* Address and size of a text symbol as `go tool nm -size` prints it (size in decimal). */
static int go_nm(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[PATH_MAX + 64], line[512];
	int err = -ENOENT;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "go tool nm -size '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		char type, sym[256];
		uint64_t a, s;

		if (sscanf(line, " %" SCNx64 " %" SCNu64 " %c %255s", &a, &s, &type, sym) == 4 &&
		    (type == 'T' || type == 't') && !strcmp(sym, name)) {
			*addr = a;
			*size = s;
			err = 0;
		}
	}
	pclose(p);
	return err;
}

struct a2l {
	char func[256];
	char file[PATH_MAX];
	uint32_t line;
};

/*
 * What `go tool addr2line` says about each address: it reads hex addresses on stdin and prints
 * the function, then "file:line", for each.
 */
static int go_addr2line(const char *path, const uint64_t *addrs, size_t nr, struct a2l *out)
{
	char tmp[] = "/tmp/test_gosym.XXXXXX", cmd[2 * PATH_MAX + 64], line[PATH_MAX + 64];
	size_t got = 0;
	FILE *f, *p;
	int fd;

	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -EIO;
	}
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "0x%" PRIx64 "\n", addrs[i]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "go tool addr2line '%s' < %s 2>/dev/null", path, tmp);
	p = popen(cmd, "r");
	if (!p) {
		unlink(tmp);
		return -errno;
	}
	while (got < nr && fgets(line, sizeof(line), p)) {
		char *colon;

		line[strcspn(line, "\n")] = '\0';
		snprintf(out[got].func, sizeof(out[got].func), "%.255s", line);
		if (!fgets(line, sizeof(line), p))
			break;
		line[strcspn(line, "\n")] = '\0';
		colon = strrchr(line, ':');
		if (!colon)
			break;
		*colon = '\0';
		snprintf(out[got].file, sizeof(out[got].file), "%.4095s", line);
		out[got].line = (uint32_t)strtoul(colon + 1, NULL, 10);
		got++;
	}
	pclose(p);
	unlink(tmp);
	return got == nr ? 0 : -EIO;
}

static int go_symtab__open_path(const char *path, struct go_symtab **gs)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = go_symtab__open(fd, gs);
	close(fd);
	return err;
}

/* The fixtures are built with the go tool, which the references need too. */
static bool have_go(void)
{
	return system("go version >/dev/null 2>&1") == 0;
}

/* Every function of main.go is named, with its entry, at its first and second byte. */
static void check_names(const char *name)
{
	uint64_t addr[GO_FUNCS], size;
	struct go_symtab *gs;
	int err;

	if (!have_go())
		SKIP("no go toolchain");
	/* The reference comes from the unstripped build: the stripped one has no symbols. */
	for (int i = 0; i < GO_FUNCS; i++) {
		err = go_nm(fixture("gohello"), go_funcs[i], &addr[i], &size);
		if (err)
			FAILF("go tool nm %s: no %s (%d)", fixture("gohello"), go_funcs[i], err);
		if (err)
			return;
	}
	err = go_symtab__open_path(fixture(name), &gs);
	CHECK_EQ(err, 0);
	CHECK(go_symtab__nr_funcs(gs) > 100);
	CHECK(go_symtab__bytes(gs) > 1000);
	for (int i = 0; i < GO_FUNCS; i++) {
		const char *file, *sym;
		uint64_t entry = 0;
		uint32_t line;

		for (uint64_t off = 0; off < 2; off++) {
			sym = go_symtab__lookup(gs, addr[i] + off, &entry, &file, &line);
			if (!sym || strcmp(sym, go_funcs[i]) || entry != addr[i]) {
				FAILF("%s: %#" PRIx64 ": %s at %#" PRIx64
				      ", expected %s at %#" PRIx64,
				      name, addr[i] + off, sym ? sym : "(null)", entry, go_funcs[i],
				      addr[i]);
				go_symtab__free(gs);
				return;
			}
		}
	}
	/* Far outside the text, and an address before any function. */
	CHECK(!go_symtab__lookup(gs, 0x10, NULL, NULL, NULL));
	CHECK(!go_symtab__lookup(gs, UINT64_MAX - 1, NULL, NULL, NULL));
	go_symtab__free(gs);
}

TEST(names_unstripped)
{
	check_names("gohello");
}

TEST(names_stripped)
{
	uint64_t addr, size;

	if (!have_go())
		SKIP("no go toolchain");
	/* The names below cannot come from an ELF symbol table: there is none. */
	CHECK_EQ(test_nm_symbol(fixture("gohello-stripped"), "main.hotLoop", 0, &addr, &size),
		 -ENOENT);
	CHECK_EQ(test_nm_symbol(fixture("gohello-stripped"), "main.hotLoop", 1, &addr, &size),
		 -ENOENT);
	CHECK_EQ(test_nm_symbol(fixture("gohello"), "main.hotLoop", 0, &addr, &size), 0);
	check_names("gohello-stripped");
}

/* Internal linking puts a PIE's table in .data.rel.ro.gopclntab. */
TEST(names_pie)
{
	uint64_t addr, size, entry;
	struct go_symtab *gs;

	if (!have_go())
		SKIP("no go toolchain");
	CHECK_EQ(go_nm(fixture("gohello-pie"), "main.hotLoop", &addr, &size), 0);
	CHECK_EQ(go_symtab__open_path(fixture("gohello-pie"), &gs), 0);
	CHECK_STR(go_symtab__lookup(gs, addr + 1, &entry, NULL, NULL), "main.hotLoop");
	CHECK_EQ(entry, addr);
	go_symtab__free(gs);
}

/* The line in main.go carrying marker, or 0. */
static uint32_t source__find_line(const char *path, const char *marker)
{
	char buf[1024];
	uint32_t nr = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		nr++;
		if (strstr(buf, marker)) {
			fclose(f);
			return nr;
		}
	}
	fclose(f);
	return 0;
}

/* File and line of every byte of the four functions, as addr2line gives them. */
static void check_lines(const char *name)
{
	static const char *const markers[GO_FUNCS] = {
	    "gosym-test: hotLoop body",
	    "gosym-test: Method body",
	    "gosym-test: helper body",
	    NULL,
	};
	uint64_t *addrs = NULL, start[GO_FUNCS], size[GO_FUNCS];
	struct a2l *ref = NULL;
	struct go_symtab *gs = NULL;
	bool seen[GO_FUNCS] = {false};
	uint32_t marker_line[GO_FUNCS] = {0};
	size_t nr = 0, at = 0;
	int err;

	if (!have_go())
		SKIP("no go toolchain");
	for (int i = 0; i < GO_FUNCS; i++) {
		CHECK_EQ(go_nm(fixture("gohello"), go_funcs[i], &start[i], &size[i]), 0);
		CHECK(size[i] > 0 && size[i] < 4096);
		nr += size[i];
	}
	addrs = calloc(nr, sizeof(*addrs));
	ref = calloc(nr, sizeof(*ref));
	if (!addrs || !ref) {
		FAILF("out of memory");
		goto out;
	}
	for (int i = 0; i < GO_FUNCS; i++) {
		for (uint64_t off = 0; off < size[i]; off++)
			addrs[at++] = start[i] + off;
	}
	err = go_addr2line(fixture("gohello"), addrs, nr, ref);
	if (err) {
		FAILF("go tool addr2line: %d", err);
		goto out;
	}
	err = go_symtab__open_path(fixture(name), &gs);
	if (err) {
		FAILF("go_symtab__open(%s): %d", name, err);
		goto out;
	}
	at = 0;
	for (int i = 0; i < GO_FUNCS; i++) {
		for (uint64_t off = 0; off < size[i]; off++, at++) {
			const char *file, *sym;
			uint32_t line;

			sym = go_symtab__lookup(gs, addrs[at], NULL, &file, &line);
			if (!sym || strcmp(sym, ref[at].func) || !file ||
			    strcmp(file, ref[at].file) || line != ref[at].line) {
				FAILF("%s: %#" PRIx64
				      ": %.60s %.120s:%u, addr2line says %.60s %.120s:%u",
				      name, addrs[at], sym ? sym : "(null)", file ? file : "(null)",
				      line, ref[at].func, ref[at].file, ref[at].line);
				goto out;
			}
			if (!marker_line[i] && markers[i])
				marker_line[i] = source__find_line(file, markers[i]);
			if (marker_line[i] && line == marker_line[i])
				seen[i] = true;
		}
	}
	/* Not just agreement: the marked body line is among the lines of its function. */
	for (int i = 0; i < GO_FUNCS; i++) {
		if (markers[i] && (!marker_line[i] || !seen[i])) {
			FAILF("%s: line %u (\"%s\") not found in %s", name, marker_line[i],
			      markers[i], go_funcs[i]);
			goto out;
		}
	}
out:
	go_symtab__free(gs);
	free(ref);
	free(addrs);
}

TEST(lines_unstripped)
{
	check_lines("gohello");
}

TEST(lines_stripped)
{
	check_lines("gohello-stripped");
}

TEST(not_go)
{
	char tmp[] = "/tmp/test_gosym.XXXXXX";
	struct go_symtab *gs = (void *)1;
	int fd, err;

	/* This test is a C program. */
	CHECK_EQ(go_symtab__open_path("/proc/self/exe", &gs), -ENODATA);
	CHECK(gs == NULL);
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	unlink(tmp);
	CHECK(write(fd, "package main\n", 13) == 13);
	err = go_symtab__open(fd, &gs);
	close(fd);
	CHECK_EQ(err, -ENOEXEC);
	go_symtab__free(NULL);
	CHECK(!go_symtab__lookup(NULL, 0x401000, NULL, NULL, NULL));
}


/* The table is copied whole: its claimed size is checked against the file and a budget first. */
TEST(table_size_bounded)
{
	struct go_symtab *gs = (void *)1;
	int fd;

	/* 1 GiB claimed in a file of 4 KiB: past its end. */
	fd = claimed_table_elf(1ull << 30, 4096);
	CHECK(fd >= 0);
	CHECK_EQ(go_symtab__open(fd, &gs), -EINVAL);
	CHECK(gs == NULL);
	close(fd);
	/* 300 MiB, all there (a sparse file): past the budget. */
	fd = claimed_table_elf(300ull << 20, (300ull << 20) + 4096);
	CHECK(fd >= 0);
	CHECK_EQ(go_symtab__open(fd, &gs), -EFBIG);
	CHECK(gs == NULL);
	close(fd);
	/* 4 KiB, all there: read (a table of no functions: its header is zeros). */
	fd = claimed_table_elf(4096, 8192);
	CHECK(fd >= 0);
	CHECK_EQ(go_symtab__open(fd, &gs), 0);
	close(fd);
	CHECK_EQ(go_symtab__nr_funcs(gs), 0);
	go_symtab__free(gs);
}

int main(void)
{
	RUN(names_unstripped);
	RUN(names_stripped);
	RUN(names_pie);
	RUN(lines_unstripped);
	RUN(lines_stripped);
	RUN(not_go);
	RUN(table_size_bounded);
	return test_summary();
}
