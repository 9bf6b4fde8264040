/* DEPS: src/symbolize/dwarf.c src/symbolize/dwarf_cu.c src/symbolize/elf.c src/lib/log.c src/lib/array.c src/lib/strtab.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Source lines and inline chains of the fixtures built by tests/unit/dwarf.mk, checked frame by
 * frame against what `addr2line -f -i` (binutils, an independent DWARF reader) prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <string.h>

#include "symbolize/dwarf.h"
#include "testlib.h"

/* More than DWARF_MAX_INLINE, so that a longer chain from addr2line shows as a mismatch. */
#define REF_MAX_LINES 16

struct ref_line {
	char function[1024];
	char file[512];
	uint32_t line;
};

/* One address as addr2line prints it. */
struct ref_frame {
	uint64_t addr;
	uint32_t nr;
	struct ref_line lines[REF_MAX_LINES];
};

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/fixtures/%s", build && *build ? build : "build", name);
	return path;
}

/* Copies what fits: addr2line's lines are short, an overlong one only fails a comparison. */
static void str_copy(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void chomp(char *s)
{
	s[strcspn(s, "\n")] = '\0';
}

/* "dir/file.c:12 (discriminator 3)" -> file "dir/file.c", line 12; "file.c:?" -> line 0. */
static void ref_line__parse_pos(struct ref_line *l, char *s)
{
	char *colon, *disc = strstr(s, " (discriminator");

	if (disc)
		*disc = '\0';
	colon = strrchr(s, ':');
	l->line = 0;
	if (colon) {
		*colon = '\0';
		l->line = (uint32_t)strtoul(colon + 1, NULL, 10);
	}
	str_copy(l->file, sizeof(l->file), s);
}

/*
 * Runs `addr2line -a -f -i` on nr addresses and parses its output: with -a each address's block
 * starts with the address itself, then a function line and a position line per frame.
 */
static int addr2line__frames(const char *path, const uint64_t *addrs, size_t nr,
			     struct ref_frame *out)
{
	char list[] = "/tmp/test_dwarf.XXXXXX", cmd[2 * PATH_MAX + 64], fn[4096], pos[4096];
	struct ref_frame *cur = NULL;
	size_t got = 0;
	FILE *f, *p;
	int fd;

	fd = mkstemp(list);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(list);
		return -EIO;
	}
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "0x%" PRIx64 "\n", addrs[i]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "addr2line -a -f -i -e '%s' < %s", path, list);
	p = popen(cmd, "r");
	if (!p) {
		unlink(list);
		return -errno;
	}
	while (fgets(fn, sizeof(fn), p)) {
		chomp(fn);
		if (!strncmp(fn, "0x", 2) && got < nr) {
			cur = &out[got++];
			cur->addr = strtoull(fn, NULL, 16);
			cur->nr = 0;
			continue;
		}
		if (!cur || !fgets(pos, sizeof(pos), p))
			break;
		chomp(pos);
		if (cur->nr < REF_MAX_LINES) {
			struct ref_line *l = &cur->lines[cur->nr++];

			str_copy(l->function, sizeof(l->function), fn);
			ref_line__parse_pos(l, pos);
		}
	}
	pclose(p);
	unlink(list);
	return got == nr ? 0 : -EIO;
}

static int addr2line__frame(const char *path, uint64_t addr, struct ref_frame *out)
{
	return addr2line__frames(path, &addr, 1, out);
}

static const char *basename_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* Whether our answer is addr2line's, frame by frame; why not in why. */
static bool frame__agrees(int err, const struct dwarf_frame *ours, const struct ref_frame *ref,
			  char *why, size_t why_size)
{
	uint32_t expect;

	if (err == -ENOENT) {
		/* No CU: addr2line then has no line either (it names the ELF symbol). */
		if (ref->nr == 1 && ref->lines[0].line == 0)
			return true;
		snprintf(why, why_size, "0x%" PRIx64 ": -ENOENT, addr2line %.200s:%u", ref->addr,
			 ref->lines[0].file, ref->lines[0].line);
		return false;
	}
	if (err) {
		snprintf(why, why_size, "0x%" PRIx64 ": error %d", ref->addr, err);
		return false;
	}
	/* Deeper chains keep the innermost callees and the real function (dwarf.h). */
	expect = ref->nr <= DWARF_MAX_INLINE ? ref->nr : DWARF_MAX_INLINE;
	if (ours->nr != expect) {
		snprintf(why, why_size,
			 "0x%" PRIx64 ": %u frames, addr2line %u (innermost %.100s/%.100s)",
			 ref->addr, ours->nr, ref->nr, ours->lines[0].function,
			 ref->lines[0].function);
		return false;
	}
	for (uint32_t i = 0; i < ours->nr; i++) {
		const struct dwarf_line *o = &ours->lines[i];
		const struct ref_line *r = &ref->lines[i + 1 == expect ? ref->nr - 1 : i];
		const char *fn = o->function ? o->function : "??";
		const char *file = o->file ? basename_of(o->file) : "??";

		/* With no DWARF function (padding after one, assembly) addr2line names the ELF
		 * symbol, as our caller does: only the position is DWARF's. */
		if ((o->function && strcmp(fn, r->function)) ||
		    strcmp(file, basename_of(r->file)) || o->line != r->line) {
			snprintf(why, why_size,
				 "0x%" PRIx64 " frame %u: %s %s:%u, addr2line %s %s:%u", ref->addr,
				 i, fn, file, o->line, r->function, basename_of(r->file), r->line);
			return false;
		}
	}
	return true;
}

/* A CU at a time unless whole_max says otherwise (dwarf_info__open_path_whole). */
static size_t whole_max;

static int dwarf_info__open_path(const char *path, struct dwarf_info **di, int *fd)
{
	int err;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	err = dwarf_info__open(*fd, whole_max, di);
	if (err) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

static void dwarf_info__close_path(struct dwarf_info *di, int fd)
{
	dwarf_info__free(di);
	if (fd >= 0)
		close(fd);
}

/*
 * The first address in [start, start + size) where addr2line's chain is exactly the functions in
 * names (innermost first). Found with addr2line, not with the code under test.
 */
static int find_addr_with_chain(const char *path, uint64_t start, uint64_t size,
				const char *const *names, uint32_t nr_names, uint64_t *addr)
{
	struct ref_frame *refs = calloc(size, sizeof(*refs));
	uint64_t *addrs = calloc(size, sizeof(*addrs));
	int err = -ENOMEM;

	if (!refs || !addrs)
		goto out_free;
	for (uint64_t i = 0; i < size; i++)
		addrs[i] = start + i;
	err = addr2line__frames(path, addrs, size, refs);
	if (err)
		goto out_free;
	err = -ENOENT;
	for (uint64_t i = 0; i < size && err; i++) {
		bool match = refs[i].nr == nr_names;

		for (uint32_t j = 0; match && j < nr_names; j++)
			match = !strcmp(refs[i].lines[j].function, names[j]);
		if (match) {
			*addr = addrs[i];
			err = 0;
		}
	}
out_free:
	free(addrs);
	free(refs);
	return err;
}

/*
 * Finds, inside function sym of path, an address whose chain is names; checks that our frame
 * there is addr2line's exactly and names the expected functions.
 */
static void check_chain(const char *path, const char *sym, const char *const *names,
			uint32_t nr_names)
{
	struct ref_frame ref;
	struct dwarf_frame frame;
	struct dwarf_info *di;
	uint64_t start, size, addr;
	char why[512];
	int fd, err;

	CHECK_EQ(test_nm_symbol(path, sym, 0, &start, &size), 0);
	CHECK_EQ(find_addr_with_chain(path, start, size, names, nr_names, &addr), 0);
	CHECK_EQ(addr2line__frame(path, addr, &ref), 0);
	CHECK_EQ(dwarf_info__open_path(path, &di, &fd), 0);
	err = dwarf_info__lookup(di, addr, &frame);
	if (!frame__agrees(err, &frame, &ref, why, sizeof(why))) {
		dwarf_info__close_path(di, fd);
		FAILF("%.100s: %.400s", path, why);
		return;
	}
	for (uint32_t i = 0; i < nr_names; i++) {
		if (!frame.lines[i].function || strcmp(frame.lines[i].function, names[i])) {
			FAILF("0x%" PRIx64 " frame %u: %s, expected %s", addr, i,
			      frame.lines[i].function, names[i]);
			break;
		}
		if (!frame.lines[i].line || !frame.lines[i].file) {
			FAILF("0x%" PRIx64 " frame %u: no position", addr, i);
			break;
		}
	}
	dwarf_info__close_path(di, fd);
}

static const char *const leaf_chain[] = {"inl_leaf", "inl_middle", "inl_outer"};
static const char *const middle_chain[] = {"inl_middle", "inl_outer"};
static const char *const outer_chain[] = {"inl_outer"};
static const char *const plain_chain[] = {"inl_plain"};
static const char *const cold_chain[] = {"inl_leaf", "inl_split"};
static const char *const split_chain[] = {"inl_leaf", "inl_middle", "inl_split"};
static const char *const cpp_chain[] = {"_ZN7fixture6scaledIlEET_S1_",
					"_ZN7fixture10accumulateIlEET_S1_"};

#define NR(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

TEST(inlined_two_levels)
{
	check_chain(fixture("inlines"), "inl_outer", leaf_chain, NR(leaf_chain));
}

TEST(inlined_one_level)
{
	check_chain(fixture("inlines"), "inl_outer", middle_chain, NR(middle_chain));
}

TEST(outer_between_inlines)
{
	check_chain(fixture("inlines"), "inl_outer", outer_chain, NR(outer_chain));
}

TEST(plain_function)
{
	check_chain(fixture("inlines"), "inl_plain", plain_chain, NR(plain_chain));
}

/* inl_split's subprogram has two ranges; the .cold one is far from the rest. */
TEST(cold_part)
{
	check_chain(fixture("inlines"), "inl_split.cold", cold_chain, NR(cold_chain));
}

TEST(hot_part)
{
	check_chain(fixture("inlines"), "inl_split", split_chain, NR(split_chain));
}

TEST(cpp_mangled)
{
	check_chain(fixture("inlines-cpp"), "_ZN7fixture10accumulateIlEET_S1_", cpp_chain,
		    NR(cpp_chain));
}

TEST(dwarf4)
{
	char cmd[PATH_MAX + 64], line[256];
	bool v4 = false;
	FILE *p;

	/* The fixture really is DWARF 4, or the test proves nothing. */
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=info '%s' 2>/dev/null",
		 fixture("inlines-dwarf4"));
	p = popen(cmd, "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "Version:") && strtol(strstr(line, "Version:") + 8, NULL, 10) == 4)
			v4 = true;
	pclose(p);
	CHECK(v4);
	check_chain(fixture("inlines-dwarf4"), "inl_outer", leaf_chain, NR(leaf_chain));
}

TEST(dwarf4_cold_part)
{
	check_chain(fixture("inlines-dwarf4"), "inl_split.cold", cold_chain, NR(cold_chain));
}

/* A separate debug file: the same DWARF, code sections NOBITS. */
TEST(debug_file)
{
	struct dwarf_frame ours, theirs;
	struct dwarf_info *bin, *dbg;
	uint64_t start, size;
	int bin_fd, dbg_fd;

	CHECK_EQ(test_nm_symbol(fixture("inlines"), "inl_outer", 0, &start, &size), 0);
	CHECK_EQ(dwarf_info__open_path(fixture("inlines"), &bin, &bin_fd), 0);
	if (dwarf_info__open_path(fixture("inlines.debug"), &dbg, &dbg_fd)) {
		dwarf_info__close_path(bin, bin_fd);
		FAILF("cannot open inlines.debug");
		return;
	}
	for (uint64_t a = start; a < start + size; a++) {
		int e1 = dwarf_info__lookup(bin, a, &ours),
		    e2 = dwarf_info__lookup(dbg, a, &theirs);
		bool same = e1 == 0 && e2 == 0 && ours.nr == theirs.nr;

		for (uint32_t i = 0; same && i < ours.nr; i++)
			same = !strcmp(ours.lines[i].function, theirs.lines[i].function) &&
			       !strcmp(ours.lines[i].file, theirs.lines[i].file) &&
			       ours.lines[i].line == theirs.lines[i].line;
		if (!same) {
			FAILF("0x%" PRIx64 ": binary and debug file differ", a);
			break;
		}
	}
	dwarf_info__close_path(dbg, dbg_fd);
	dwarf_info__close_path(bin, bin_fd);
}

TEST(no_debug_info)
{
	struct dwarf_info *di = NULL;
	int fd;

	CHECK_EQ(dwarf_info__open_path(fixture("inlines-nodebug"), &di, &fd), -ENODATA);
	CHECK(!di);
}

TEST(not_elf)
{
	struct dwarf_info *di = NULL;
	int fd;

	CHECK_EQ(dwarf_info__open_path("tests/fixtures/inlines.c", &di, &fd), -ENOEXEC);
}

TEST(address_in_no_cu)
{
	static const uint64_t addrs[] = {0, 0x10, 0x7fffffff00000000ull, UINT64_MAX};
	struct dwarf_frame frame;
	struct dwarf_info *di;
	int fd, err = 0;

	CHECK_EQ(dwarf_info__open_path(fixture("inlines"), &di, &fd), 0);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]) && !err; i++) {
		if (dwarf_info__lookup(di, addrs[i], &frame) != -ENOENT)
			err = -EINVAL;
	}
	dwarf_info__close_path(di, fd);
	CHECK_EQ(err, 0);
}

TEST(bytes)
{
	struct dwarf_frame frame;
	struct dwarf_info *di;
	uint64_t start, size;
	size_t before, after;
	int fd;

	dwarf_info__free(NULL);
	CHECK_EQ(dwarf_info__bytes(NULL), 0);
	CHECK_EQ(test_nm_symbol(fixture("inlines"), "inl_outer", 0, &start, &size), 0);
	CHECK_EQ(dwarf_info__open_path(fixture("inlines"), &di, &fd), 0);
	before = dwarf_info__bytes(di);
	dwarf_info__lookup(di, start, &frame);
	after = dwarf_info__bytes(di);
	dwarf_info__close_path(di, fd);
	CHECK(before > 0);
	/* The first lookup in a CU indexes it and makes libdw read its line table. */
	CHECK(after > before);
}

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool frame__same(const struct dwarf_frame *a, const struct dwarf_frame *b)
{
	if (a->nr != b->nr)
		return false;
	for (uint32_t i = 0; i < a->nr; i++)
		if (!str_same(a->lines[i].function, b->lines[i].function) ||
		    !str_same(a->lines[i].file, b->lines[i].file) ||
		    a->lines[i].line != b->lines[i].line)
			return false;
	return true;
}

/*
 * A release lets libdw go and keeps what was read: the CUs read before answer as they did, with
 * no new open; a CU not read before opens libdw again and answers as addr2line does. The
 * agent's own binary has hundreds of CUs.
 */
TEST(release_keeps_answers)
{
	const char *build = getenv("BUILD");
	char path[PATH_MAX];
	struct dwarf_frame before, after, other;
	struct ref_frame ref;
	uint64_t a_start, a_size, b_start, b_size;
	struct dwarf_info *di;
	size_t held, freed;
	char why[512];
	int fd;

	snprintf(path, sizeof(path), "%s/autoprof", build && *build ? build : "build");
	CHECK_EQ(test_nm_symbol(path, "dwarf_info__lookup", 0, &a_start, &a_size), 0);
	CHECK_EQ(test_nm_symbol(path, "histfile_writer__str", 0, &b_start, &b_size), 0);
	CHECK_EQ(dwarf_info__open_path(path, &di, &fd), 0);
	CHECK_EQ(dwarf_info__lookup(di, a_start + a_size / 2, &before), 0);
	CHECK_EQ(dwarf_info__opens(di), 1);
	/* Not idle long enough: nothing goes. */
	CHECK_EQ(dwarf_info__maintain(di, UINT64_MAX), 0);
	held = dwarf_info__bytes(di);
	freed = dwarf_info__maintain(di, 0);
	CHECK(freed > 0);
	CHECK_EQ(dwarf_info__lets_go(di), 1);
	CHECK_EQ(dwarf_info__bytes(di), held - freed);
	CHECK_EQ(dwarf_info__maintain(di, 0), 0);
	CHECK_EQ(dwarf_info__lookup(di, a_start + a_size / 2, &after), 0);
	CHECK(frame__same(&before, &after));
	CHECK_EQ(dwarf_info__opens(di), 1);
	CHECK_EQ(dwarf_info__lookup(di, b_start + b_size / 2, &other), 0);
	CHECK_EQ(dwarf_info__opens(di), 2);
	CHECK_EQ(addr2line__frame(path, b_start + b_size / 2, &ref), 0);
	if (!frame__agrees(0, &other, &ref, why, sizeof(why)))
		FAILF("after a release: %.400s", why);
	CHECK(frame__same(&before, &after));
	dwarf_info__close_path(di, fd);
}

/*
 * A file within DWARF_WHOLE_MAX is copied whole, a step at each dwarf_info__maintain, then libdw
 * let go: every other CU then answers from the copies, as addr2line does, with no new open.
 */
TEST(whole_copy_lets_go)
{
	const char *build = getenv("BUILD");
	char path[PATH_MAX];
	size_t freed = 0;
	struct dwarf_frame frame;
	struct ref_frame ref;
	uint64_t a_start, a_size, b_start, b_size;
	struct dwarf_info *di;
	char why[512];
	int fd;

	snprintf(path, sizeof(path), "%s/autoprof", build && *build ? build : "build");
	CHECK_EQ(test_nm_symbol(path, "dwarf_info__lookup", 0, &a_start, &a_size), 0);
	CHECK_EQ(test_nm_symbol(path, "histfile_writer__str", 0, &b_start, &b_size), 0);
	whole_max = DWARF_WHOLE_MAX;
	CHECK_EQ(dwarf_info__open_path(path, &di, &fd), 0);
	whole_max = 0;
	CHECK_EQ(dwarf_info__lookup(di, a_start + a_size / 2, &frame), 0);
	/* The copy goes a step at each call, libdw let go at the last (its bytes returned). */
	for (int i = 0; i < 1000 && !dwarf_info__lets_go(di); i++)
		freed = dwarf_info__maintain(di, UINT64_MAX);
	CHECK_EQ(dwarf_info__lets_go(di), 1);
	CHECK(freed > 0);
	CHECK_EQ(dwarf_info__maintain(di, 0), 0);
	CHECK_EQ(dwarf_info__lookup(di, b_start + b_size / 2, &frame), 0);
	CHECK_EQ(dwarf_info__opens(di), 1);
	CHECK_EQ(addr2line__frame(path, b_start + b_size / 2, &ref), 0);
	if (!frame__agrees(0, &frame, &ref, why, sizeof(why)))
		FAILF("from a whole copy: %.400s", why);
	dwarf_info__close_path(di, fd);
}

/* The executable's .text as readelf -SW lists it. */
static int readelf__text(const char *path, uint64_t *addr, uint64_t *size)
{
	char cmd[PATH_MAX + 64], line[512];
	int err = -ENOENT;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		const char *s = strstr(line, "] .text ");
		char type[32];
		uint64_t off;

		if (s && sscanf(s + strlen("] .text "), "%31s %" SCNx64 " %" SCNx64 " %" SCNx64,
				type, addr, &off, size) == 4)
			err = 0;
	}
	pclose(p);
	return err;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Every 4th address of .text against addr2line; at least 99% must agree. Then the same addresses
 * again, warm, for the per-lookup cost; then again with libdw let go every 64 lookups, which must
 * change no answer.
 */
static void sweep(const char *name, const char *path)
{
	struct ref_frame *refs = NULL;
	uint64_t *addrs = NULL, text, size;
	size_t nr = 0, agree = 0, rounds = 0, found = 0, inlined = 0, changed = 0;
	struct dwarf_frame frame, *first = NULL;
	struct dwarf_info *di;
	char why[512] = "", first_why[512] = "";
	double t0, t1;
	int fd;

	CHECK_EQ(readelf__text(path, &text, &size), 0);
	CHECK(size > 0);
	addrs = calloc(size / 4 + 1, sizeof(*addrs));
	refs = calloc(size / 4 + 1, sizeof(*refs));
	first = calloc(size / 4 + 1, sizeof(*first));
	if (!addrs || !refs || !first) {
		free(addrs);
		free(refs);
		free(first);
		FAILF("out of memory");
		return;
	}
	for (uint64_t a = text; a < text + size; a += 4)
		addrs[nr++] = a;
	if (addr2line__frames(path, addrs, nr, refs) || dwarf_info__open_path(path, &di, &fd)) {
		free(addrs);
		free(refs);
		free(first);
		FAILF("addr2line or open failed on %s", path);
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		int err = dwarf_info__lookup(di, addrs[i], &frame);

		found += !err;
		inlined += !err && frame.nr > 1;
		first[i] = err ? (struct dwarf_frame){0} : frame;
		if (frame__agrees(err, &frame, &refs[i], why, sizeof(why)))
			agree++;
		else if (!first_why[0])
			memcpy(first_why, why, sizeof(why));
		else if (getenv("TEST_DWARF_VERBOSE"))
			fprintf(stderr, "# %s\n", why);
	}
	t0 = now_s();
	do {
		for (size_t i = 0; i < nr; i++)
			dwarf_info__lookup(di, addrs[i], &frame);
		rounds++;
		t1 = now_s();
	} while (t1 - t0 < 0.2);
	for (size_t i = 0; i < nr; i++) {
		if (i % 64 == 0)
			dwarf_info__maintain(di, 0);
		if (dwarf_info__lookup(di, addrs[i], &frame))
			frame = (struct dwarf_frame){0};
		changed += !frame__same(&frame, &first[i]);
	}
	dwarf_info__close_path(di, fd);
	free(addrs);
	free(refs);
	free(first);
	fprintf(stderr,
		"# %s: %zu/%zu agree with addr2line (%.2f%%; %zu in a CU, %zu inlined)%s%s\n", name,
		agree, nr, 100.0 * agree / nr, found, inlined,
		first_why[0] ? "; first difference " : "", first_why);
	fprintf(stderr, "# %s: %.0f warm lookups/s (%.2f us each)\n", name, rounds * nr / (t1 - t0),
		(t1 - t0) * 1e6 / (rounds * nr));
	if (agree * 100 < nr * 99)
		FAILF("%zu/%zu agree; %s", agree, nr, first_why);
	if (changed)
		FAILF("%zu of %zu answers changed after libdw was let go", changed, nr);
}

TEST(sweep_text)
{
	sweep("inlines", fixture("inlines"));
}

TEST(sweep_text_dwarf4)
{
	sweep("inlines-dwarf4", fixture("inlines-dwarf4"));
}

TEST(sweep_text_cpp)
{
	sweep("inlines-cpp", fixture("inlines-cpp"));
}

/* The same, copied whole at the first lookup. */
TEST(sweep_text_whole)
{
	whole_max = DWARF_WHOLE_MAX;
	sweep("inlines, whole", fixture("inlines"));
	sweep("inlines-cpp, whole", fixture("inlines-cpp"));
	whole_max = 0;
}

/* This test's own file (-O2 -g, the DWARF reader among it): CUs of hundreds of line rows, so
 * lookups cross the coded line table's blocks (LINE_BLOCK rows each) where the fixtures' stay
 * in one. */
TEST(sweep_self)
{
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK(n > 0);
	if (n <= 0)
		return;
	self[n] = '\0';
	sweep("test_dwarf itself", self);
	whole_max = DWARF_WHOLE_MAX;
	sweep("test_dwarf itself, whole", self);
	whole_max = 0;
}

static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * The innermost line of every address of this test's own text, exactly as libdw's own
 * dwarf_getsrc_die gives it: the coded line table must answer as the rows it was made from,
 * at the first and last row of each block too.
 */
TEST(lines_match_libdw)
{
	static char self[4096];
	size_t nr = 0, differ = 0, with_line = 0;
	struct dwarf_info *di = NULL;
	uint64_t text, size;
	Dwarf *dw = NULL;
	int fd = -1, fd2;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	if (n <= 0)
		return;
	self[n] = '\0';
	CHECK_EQ(readelf__text(self, &text, &size), 0);
	fd2 = open(self, O_RDONLY | O_CLOEXEC);
	dw = fd2 >= 0 ? dwarf_begin(fd2, DWARF_C_READ) : NULL;
	CHECK(dw);
	CHECK_EQ(dwarf_info__open_path(self, &di, &fd), 0);
	for (uint64_t a = text; dw && di && a < text + size; a++) {
		struct dwarf_frame frame = {0};
		const char *want_file = NULL, *got_file;
		Dwarf_Line *l = NULL;
		Dwarf_Die cudie;
		int want = 0;

		if (dwarf_addrdie(dw, a, &cudie))
			l = dwarf_getsrc_die(&cudie, a);
		if (l && !dwarf_lineno(l, &want))
			want_file = dwarf_linesrc(l, NULL, NULL);
		if (dwarf_info__lookup(di, a, &frame))
			frame = (struct dwarf_frame){0};
		got_file = frame.nr ? frame.lines[0].file : NULL;
		nr++;
		with_line += want_file != NULL;
		/* Files by name: libdw and the copies join a relative one with comp_dir apart. */
		if ((want_file ? (uint32_t)want : 0) != (frame.nr ? frame.lines[0].line : 0) ||
		    !want_file != !got_file ||
		    (want_file && strcmp(base(want_file), base(got_file)))) {
			if (!differ++)
				FAILF("%#" PRIx64 ": libdw %s:%d, ours %s:%u", a,
				      want_file ? want_file : "??", want, got_file ? got_file : "??",
				      frame.nr ? frame.lines[0].line : 0);
		}
	}
	fprintf(stderr, "# %zu addresses, %zu with a line, %zu differ\n", nr, with_line, differ);
	CHECK(with_line > nr / 2);
	dwarf_info__close_path(di, fd);
	dwarf_end(dw);
	if (fd2 >= 0)
		close(fd2);
}

/* TEST_DWARF_SWEEP=/path/to/binary sweeps any other file with DWARF the same way (whole with
 * TEST_DWARF_WHOLE=1). */
TEST(sweep_extra)
{
	const char *path = getenv("TEST_DWARF_SWEEP");

	if (!path || !*path)
		SKIP("TEST_DWARF_SWEEP not set");
	if (getenv("TEST_DWARF_WHOLE"))
		whole_max = DWARF_WHOLE_MAX;
	sweep(path, path);
	whole_max = 0;
}

int main(void)
{
	RUN(inlined_two_levels);
	RUN(inlined_one_level);
	RUN(outer_between_inlines);
	RUN(plain_function);
	RUN(cold_part);
	RUN(hot_part);
	RUN(cpp_mangled);
	RUN(dwarf4);
	RUN(dwarf4_cold_part);
	RUN(debug_file);
	RUN(no_debug_info);
	RUN(not_elf);
	RUN(address_in_no_cu);
	RUN(bytes);
	RUN(release_keeps_answers);
	RUN(whole_copy_lets_go);
	RUN(sweep_text);
	RUN(sweep_text_dwarf4);
	RUN(sweep_text_cpp);
	RUN(sweep_text_whole);
	RUN(sweep_self);
	RUN(lines_match_libdw);
	RUN(sweep_extra);
	return test_summary();
}
