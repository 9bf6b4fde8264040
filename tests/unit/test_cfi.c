/* DEPS: src/unwind/cfi.c src/unwind/cfi_builder.c src/unwind/gocfi.c src/symbolize/gosym.c src/symbolize/elf.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unwind rows built from .eh_frame/.debug_frame, checked row by row against readelf -wF (binutils'
 * own CFI interpreter) on glibc, libstdc++ and the fixtures of tests/unit/cfi.mk, plus the rules
 * readelf cannot show (PLT, signal frame, synthesized PLT rows), hand-made CFI exercising the
 * opcodes and encodings compilers rarely emit, and malformed input.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/gosym.h"
#include "unwind/cfi.h"
#include "testlib.h"

#define LIBC	  "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/fixtures/%s", build && *build ? build : "build", name);
	return path;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int build_path(const char *path, struct cfi_table *t, double *ms)
{
	double t0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	t0 = now_ms();
	err = cfi__build(fd, t);
	if (ms)
		*ms = now_ms() - t0;
	close(fd);
	return err;
}

/* A row's rule as the tests read it: a few in turn, each valid until 8 more are asked for. */
static const struct unwind_rule *rule_of(const struct unwind_row *row)
{
	static struct unwind_rule ring[8];
	static unsigned int next;

	if (!row)
		return NULL;
	ring[next % 8] = unwind_row__rule(row);
	return &ring[next++ % 8];
}

/* The rule of the row covering file offset off, NULL before the first. */
static const struct unwind_rule *lookup(const struct cfi_table *t, uint64_t off)
{
	uint32_t lo = 0, hi = t->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? rule_of(&t->rows[lo - 1]) : NULL;
}

static bool sorted(const struct cfi_table *t)
{
	for (uint32_t i = 1; i < t->nr; i++) {
		if (t->rows[i].pc <= t->rows[i - 1].pc)
			return false;
	}
	return true;
}

struct seg {
	uint64_t off, vaddr, size;
};

struct segs {
	struct seg s[16];
	int nr;
};

/* The executable PT_LOADs as readelf -lW lists them. */
static int readelf_segs(const char *path, struct segs *segs)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *p;

	segs->nr = 0;
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		uint64_t off, va, pa, fsz, msz;
		char flags[16];

		if (sscanf(line,
			   " LOAD 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64
			   " 0x%" SCNx64 " %15[RWE ]",
			   &off, &va, &pa, &fsz, &msz, flags) == 6 &&
		    strchr(flags, 'E') && segs->nr < 16)
			segs->s[segs->nr++] = (struct seg){ off, va, fsz };
	}
	pclose(p);
	return segs->nr ? 0 : -ENOENT;
}

static bool to_off(const struct segs *segs, uint64_t vaddr, uint64_t *off)
{
	for (int i = 0; i < segs->nr; i++) {
		if (vaddr >= segs->s[i].vaddr && vaddr - segs->s[i].vaddr < segs->s[i].size) {
			*off = vaddr - segs->s[i].vaddr + segs->s[i].off;
			return true;
		}
	}
	return false;
}

/* A section's address, size and flags column as readelf -SW prints them. */
static int readelf_section(const char *path, const char *name, uint64_t *addr, uint64_t *size,
			   char *flags, size_t flags_size)
{
	char cmd[PATH_MAX + 64], line[512];
	int err = -ENOENT;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		char sname[64], type[32], fl[16] = "";
		uint64_t a, o, s, es;
		const char *b = strchr(line, ']');

		if (!b || sscanf(b + 1, " %63s %31s %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
				 " %15s",
				 sname, type, &a, &o, &s, &es, fl) < 6 ||
		    strcmp(sname, name))
			continue;
		*addr = a;
		*size = s;
		if (flags)
			snprintf(flags, flags_size, "%s", fl);
		err = 0;
	}
	pclose(p);
	return err;
}

/* One FDE of readelf -wF and its table. */
struct re_row {
	uint64_t loc;
	char cfa[32], rbp[32], ra[32];
};

struct re_fde {
	uint64_t start, end;
	bool signal, debug_frame;
	size_t nr;
	struct re_row *rows;
};

struct re_file {
	struct re_fde *fdes;
	size_t nr, cap;
};

static void re_file__free(struct re_file *f)
{
	for (size_t i = 0; i < f->nr; i++)
		free(f->fdes[i].rows);
	free(f->fdes);
	memset(f, 0, sizeof(*f));
}

/* Parses readelf -wF: CIEs (for 'S'), FDE ranges, and each table's CFA, rbp and ra columns. */
static int readelf_frames(const char *path, struct re_file *f)
{
	char cmd[PATH_MAX + 64], line[4096];
	uint64_t cie_off[256];
	bool cie_sig[256];
	int nr_cies = 0, col_rbp = -1, col_ra = -1;
	bool debug_frame = false, in_fde = false;
	FILE *p;

	memset(f, 0, sizeof(*f));
	snprintf(cmd, sizeof(cmd), "readelf -wF '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		char aug[64], *tok, *save;
		uint64_t off, len, id, cie, start, end;
		int col;

		if (strstr(line, "Contents of the .debug_frame")) {
			debug_frame = true;
			nr_cies = 0;
			continue;
		}
		if (strstr(line, "Contents of the .eh_frame")) {
			debug_frame = false;
			nr_cies = 0;
			continue;
		}
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " CIE \"%63[^\"]\"", &off, &len,
			   &id, aug) >= 3 &&
		    strstr(line, " CIE ")) {
			if (nr_cies < 256) {
				cie_off[nr_cies] = off;
				cie_sig[nr_cies++] = strstr(line, "CIE \"") && strchr(aug, 'S') &&
						     strstr(line, "CIE \"\"") == NULL;
			}
			in_fde = false;
			continue;
		}
		if (sscanf(line,
			   "%" SCNx64 " %" SCNx64 " %" SCNx64 " FDE cie=%" SCNx64 " pc=%" SCNx64
			   "..%" SCNx64,
			   &off, &len, &id, &cie, &start, &end) == 6) {
			struct re_fde *fde;

			if (f->nr == f->cap) {
				f->cap = f->cap ? 2 * f->cap : 256;
				f->fdes = realloc(f->fdes, f->cap * sizeof(*f->fdes));
				if (!f->fdes)
					abort();
			}
			fde = &f->fdes[f->nr++];
			memset(fde, 0, sizeof(*fde));
			fde->start = start;
			fde->end = end;
			fde->debug_frame = debug_frame;
			for (int i = 0; i < nr_cies; i++) {
				if (cie_off[i] == cie)
					fde->signal = cie_sig[i];
			}
			in_fde = true;
			col_rbp = col_ra = -1;
			continue;
		}
		if (!in_fde)
			continue;
		if (strstr(line, "   LOC ")) {
			col = 0;
			for (tok = strtok_r(line, " \n", &save); tok;
			     tok = strtok_r(NULL, " \n", &save), col++) {
				if (!strcmp(tok, "rbp"))
					col_rbp = col;
				else if (!strcmp(tok, "ra"))
					col_ra = col;
			}
			continue;
		}
		if (sscanf(line, "%" SCNx64 " ", &start) == 1 && strlen(line) > 17 &&
		    line[16] == ' ') {
			struct re_fde *fde = &f->fdes[f->nr - 1];
			struct re_row *r;

			fde->rows = realloc(fde->rows, (fde->nr + 1) * sizeof(*fde->rows));
			if (!fde->rows)
				abort();
			r = &fde->rows[fde->nr++];
			memset(r, 0, sizeof(*r));
			r->loc = start;
			col = 0;
			for (tok = strtok_r(line, " \n", &save); tok;
			     tok = strtok_r(NULL, " \n", &save), col++) {
				/* "r10 (r10)": a register rule is printed with its name. */
				if (tok[0] == '(') {
					col--;
					continue;
				}
				if (col == 1)
					snprintf(r->cfa, sizeof(r->cfa), "%s", tok);
				else if (col == col_rbp)
					snprintf(r->rbp, sizeof(r->rbp), "%s", tok);
				else if (col == col_ra)
					snprintf(r->ra, sizeof(r->ra), "%s", tok);
			}
		}
	}
	pclose(p);
	return f->nr ? 0 : -ENOENT;
}

static bool in_range(uint64_t a, uint64_t lo, uint64_t size)
{
	return a >= lo && a - lo < size;
}

/* What our row for a readelf row must be; false (with why) if it is not. */
static bool row_matches(const struct re_fde *fde, const struct re_row *rr, bool in_plt,
			const struct unwind_rule *r, char *why, size_t why_size)
{
	long v;

	if (!r) {
		snprintf(why, why_size, "no row");
		return false;
	}
	if (!strcmp(rr->ra, "u")) {
		if (r->cfa_type == UNWIND_CFA_UNDEFINED)
			return true;
		snprintf(why, why_size, "ra u but cfa_type %u", r->cfa_type);
		return false;
	}
	if (fde->signal) {
		if (r->cfa_type == UNWIND_CFA_SIGNAL)
			return true;
		snprintf(why, why_size, "signal FDE but cfa_type %u", r->cfa_type);
		return false;
	}
	if (!strcmp(rr->cfa, "exp")) {
		unsigned int want = in_plt ? UNWIND_CFA_PLT : UNWIND_CFA_INVALID;

		if (r->cfa_type == want)
			return true;
		snprintf(why, why_size, "cfa exp: cfa_type %u, expected %u", r->cfa_type, want);
		return false;
	}
	if (sscanf(rr->cfa, "rsp%ld", &v) == 1) {
		if (r->cfa_type != UNWIND_CFA_RSP || r->cfa_off != v) {
			snprintf(why, why_size, "cfa %s: type %u off %d", rr->cfa, r->cfa_type,
				 r->cfa_off);
			return false;
		}
	} else if (sscanf(rr->cfa, "rbp%ld", &v) == 1) {
		if (r->cfa_type != UNWIND_CFA_RBP || r->cfa_off != v) {
			snprintf(why, why_size, "cfa %s: type %u off %d", rr->cfa, r->cfa_type,
				 r->cfa_off);
			return false;
		}
	} else {
		if (r->cfa_type == UNWIND_CFA_INVALID)
			return true;
		snprintf(why, why_size, "cfa %s: type %u", rr->cfa, r->cfa_type);
		return false;
	}
	if (sscanf(rr->rbp, "c%ld", &v) == 1) {
		if (r->rbp_type != UNWIND_RBP_OFFSET || r->rbp_off != v) {
			snprintf(why, why_size, "rbp %s: type %u off %d", rr->rbp, r->rbp_type,
				 r->rbp_off);
			return false;
		}
	} else if (!rr->rbp[0] || !strcmp(rr->rbp, "u") || !strcmp(rr->rbp, "s")) {
		if (r->rbp_type != UNWIND_RBP_SAME) {
			snprintf(why, why_size, "rbp '%s': type %u", rr->rbp, r->rbp_type);
			return false;
		}
	} else if (r->rbp_type != UNWIND_RBP_INVALID) {
		snprintf(why, why_size, "rbp '%s': type %u", rr->rbp, r->rbp_type);
		return false;
	}
	return true;
}

struct cmp_stats {
	size_t checked, skipped, fdes;
};

/*
 * Every readelf row of every FDE we use (.eh_frame's, and .debug_frame's where no .eh_frame FDE
 * covers the code) must match our row at its address, and so must the end of each FDE's range
 * being covered by some row.
 */
static void compare_readelf(const char *path, const struct cfi_table *t, struct cmp_stats *st)
{
	uint64_t plt = 0, plt_size = 0;
	struct re_file f;
	struct segs segs;
	char why[256];

	memset(st, 0, sizeof(*st));
	if (readelf_segs(path, &segs))
		FAILF("%s: no executable PT_LOAD", path);
	if (readelf_frames(path, &f)) {
		FAILF("%s: readelf -wF gave no FDE", path);
		return;
	}
	readelf_section(path, ".plt", &plt, &plt_size, NULL, 0);
	for (size_t i = 0; i < f.nr && !test_cur_failed; i++) {
		const struct re_fde *fde = &f.fdes[i];
		bool hidden = false;

		if (fde->debug_frame) {
			for (size_t j = 0; j < f.nr; j++) {
				if (!f.fdes[j].debug_frame && f.fdes[j].start < fde->end &&
				    f.fdes[j].end > fde->start)
					hidden = true;
			}
		}
		if (hidden || fde->start >= fde->end)
			continue;
		st->fdes++;
		for (size_t k = 0; k < fde->nr; k++) {
			const struct re_row *rr = &fde->rows[k];
			uint64_t off;

			/* readelf prints a row per advance, even one a later row at the same
			 * address replaces. */
			if ((k + 1 < fde->nr && fde->rows[k + 1].loc == rr->loc) ||
			    rr->loc < fde->start || rr->loc >= fde->end) {
				st->skipped++;
				continue;
			}
			if (!to_off(&segs, rr->loc, &off)) {
				st->skipped++;
				continue;
			}
			if (!row_matches(fde, rr, in_range(rr->loc, plt, plt_size), lookup(t, off),
					 why, sizeof(why))) {
				FAILF("%s: FDE %#" PRIx64 "..%#" PRIx64 " row %#" PRIx64
				      " (file offset %#" PRIx64 "): %s",
				      path, fde->start, fde->end, rr->loc, off, why);
				break;
			}
			st->checked++;
		}
	}
	re_file__free(&f);
}

static void check_file(const char *path, const char *label, bool print_stats)
{
	struct cfi_table t = {};
	struct cmp_stats st;
	double ms, best = 1e9;
	int err;

	if (access(path, R_OK))
		SKIP("%s: %s", path, strerror(errno));
	/* Best of 3: the first run also pays for page faults on the file. */
	for (int i = 0; i < 3; i++) {
		cfi_table__release(&t);
		err = build_path(path, &t, &ms);
		if (err) {
			FAILF("%s: cfi__build: %s", path, strerror(-err));
			return;
		}
		if (ms < best)
			best = ms;
	}
	if (!sorted(&t)) {
		FAILF("%s: rows not strictly sorted", path);
		cfi_table__release(&t);
		return;
	}
	compare_readelf(path, &t, &st);
	if (print_stats)
		printf("   %s: %u rows, %zu bytes, built in %.3f ms; %zu FDEs, %zu readelf rows "
		       "checked\n",
		       label, t.nr, (size_t)t.nr * sizeof(struct unwind_row), best, st.fdes,
		       st.checked);
	if (!test_cur_failed && st.checked < 10)
		FAILF("%s: only %zu readelf rows compared", path, st.checked);
	cfi_table__release(&t);
}

TEST(readelf_glibc)
{
	check_file(LIBC, "glibc", true);
}

TEST(readelf_libstdcxx)
{
	check_file(LIBSTDCXX, "libstdc++", true);
}

TEST(readelf_c_fixture)
{
	check_file(fixture("cfi-c"), "cfi-c", false);
}

TEST(readelf_cxx_exceptions)
{
	check_file(fixture("cfi-cxx"), "cfi-cxx", false);
}

TEST(readelf_nopie)
{
	struct segs segs;

	if (readelf_segs(fixture("cfi-nopie"), &segs))
		SKIP("%s not built", fixture("cfi-nopie"));
	CHECK(segs.s[0].vaddr != segs.s[0].off);
	check_file(fixture("cfi-nopie"), "cfi-nopie", false);
}

/* The program's own functions, described only in .debug_frame, have rows. */
static void check_debug_frame(const char *name, bool compressed)
{
	uint64_t addr, size, main_off;
	struct cfi_table t = {};
	const struct unwind_rule *r;
	struct segs segs;
	char flags[16];

	if (access(fixture(name), R_OK))
		SKIP("%s not built", fixture(name));
	CHECK(readelf_section(fixture(name), ".debug_frame", &addr, &size, flags,
			      sizeof(flags)) == 0);
	CHECK(!!strchr(flags, 'C') == compressed);
	check_file(fixture(name), name, false);
	if (test_cur_failed)
		return;
	CHECK(test_nm_symbol(fixture(name), "main", 0, &addr, &size) == 0);
	CHECK(readelf_segs(fixture(name), &segs) == 0);
	CHECK(to_off(&segs, addr, &main_off));
	CHECK_EQ(build_path(fixture(name), &t, NULL), 0);
	r = lookup(&t, main_off);
	if (!r || r->cfa_type != UNWIND_CFA_RSP || r->cfa_off != 8)
		FAILF("main at %#" PRIx64 ": no rsp+8 row from .debug_frame", main_off);
	cfi_table__release(&t);
}

TEST(readelf_debug_frame)
{
	check_debug_frame("cfi-dbg", false);
}

TEST(readelf_debug_frame_compressed)
{
	check_debug_frame("cfi-dbgz", true);
}

/* glibc's __restore_rt: the FDE of the "zRS" CIE. */
TEST(glibc_restore_rt_signal)
{
	struct cfi_table t = {};
	struct re_file f;
	struct segs segs;
	int found = 0;

	if (readelf_frames(LIBC, &f))
		SKIP("readelf -wF %s failed", LIBC);
	CHECK(readelf_segs(LIBC, &segs) == 0);
	CHECK_EQ(build_path(LIBC, &t, NULL), 0);
	for (size_t i = 0; i < f.nr; i++) {
		const struct unwind_rule *r;
		uint64_t off;

		if (!f.fdes[i].signal || !to_off(&segs, f.fdes[i].start + 1, &off))
			continue;
		found++;
		r = lookup(&t, off);
		if (!r || r->cfa_type != UNWIND_CFA_SIGNAL)
			FAILF("signal FDE at %#" PRIx64 ": not SIGNAL", f.fdes[i].start);
	}
	re_file__free(&f);
	cfi_table__release(&t);
	if (!found)
		FAILF("no FDE of an 'S' CIE in %s", LIBC);
}

static const struct unwind_rule *row_at_vaddr(const char *path, const struct cfi_table *t,
					     uint64_t vaddr)
{
	struct segs segs;
	uint64_t off;

	if (readelf_segs(path, &segs) || !to_off(&segs, vaddr, &off))
		return NULL;
	return lookup(t, off);
}

TEST(start_is_outermost)
{
	const char *path = fixture("cfi-nopie");
	struct cfi_table t = {};
	const struct unwind_rule *r;
	uint64_t addr, size;

	if (access(path, R_OK))
		SKIP("%s not built", path);
	CHECK(test_nm_symbol(path, "_start", 0, &addr, &size) == 0);
	CHECK_EQ(build_path(path, &t, NULL), 0);
	r = row_at_vaddr(path, &t, addr + 1);
	CHECK(r != NULL);
	CHECK_EQ(r->cfa_type, UNWIND_CFA_UNDEFINED);
	cfi_table__release(&t);
}

/*
 * The dynamic loader's entry (_start, no CFI of its own): its first instruction is outermost,
 * where a process sampled before it ran any is; the CFI's own rows are left alone.
 */
TEST(loader_entry_is_outermost)
{
	const char *path = "/lib64/ld-linux-x86-64.so.2";
	struct cfi_table t = {};
	const struct unwind_rule *r;
	uint64_t entry;

	if (test_elf_entry(path, &entry))
		SKIP("%s: no entry point read", path);
	CHECK_EQ(build_path(path, &t, NULL), 0);
	r = row_at_vaddr(path, &t, entry);
	CHECK(r != NULL);
	if (r)
		CHECK_EQ(r->cfa_type, UNWIND_CFA_UNDEFINED);
	/* Past the first instruction: whatever the CFI says (here: nothing, frame pointers). */
	r = row_at_vaddr(path, &t, entry + 1);
	CHECK(!r || r->cfa_type != UNWIND_CFA_UNDEFINED);
	cfi_table__release(&t);
}

/* ld's lazy .plt FDE: the first entry pushes, the others use the PLT expression (threshold 11). */
TEST(plt_rows)
{
	const char *path = fixture("cfi-c");
	struct cfi_table t = {};
	const struct unwind_rule *r;
	uint64_t plt, size;

	if (access(path, R_OK))
		SKIP("%s not built", path);
	CHECK(readelf_section(path, ".plt", &plt, &size, NULL, 0) == 0);
	CHECK(size >= 32);
	CHECK_EQ(build_path(path, &t, NULL), 0);
	r = row_at_vaddr(path, &t, plt);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 16);
	r = row_at_vaddr(path, &t, plt + 8);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 24);
	for (uint64_t a = plt + 16; a < plt + size; a += 4) {
		r = row_at_vaddr(path, &t, a);
		CHECK(r && r->cfa_type == UNWIND_CFA_PLT && r->cfa_off == 11);
	}
	cfi_table__release(&t);
}

/* Without ld's PLT unwind info, IBT PLTs get synthesized rows. */
TEST(synthesized_plt_rows)
{
	const char *path = fixture("cfi-ibt");
	struct cfi_table t = {};
	const struct unwind_rule *r;
	uint64_t plt, size, sec, sec_size, got, got_size;

	if (access(path, R_OK))
		SKIP("%s not built", path);
	CHECK(readelf_section(path, ".plt", &plt, &size, NULL, 0) == 0);
	CHECK(readelf_section(path, ".plt.sec", &sec, &sec_size, NULL, 0) == 0);
	CHECK_EQ(build_path(path, &t, NULL), 0);
	for (uint64_t a = sec; a < sec + sec_size; a++) {
		r = row_at_vaddr(path, &t, a);
		CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8 &&
		      r->rbp_type == UNWIND_RBP_SAME);
	}
	if (readelf_section(path, ".plt.got", &got, &got_size, NULL, 0) == 0) {
		r = row_at_vaddr(path, &t, got);
		CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8);
	}
	r = row_at_vaddr(path, &t, plt);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 16);
	r = row_at_vaddr(path, &t, plt + 16);
	/* endbr64 + push: ld's own IBT PLT FDE uses DW_OP_lit9 too. */
	CHECK(r && r->cfa_type == UNWIND_CFA_PLT && r->cfa_off == 9);
	cfi_table__release(&t);
}

struct go_check {
	const char *path;
	const struct cfi_table *t;
	unsigned int funcs, ranges, bad, topframes, frameless;
	uint64_t hot_entry, goexit_entry, asmcgocall_entry;
};

/* Every range of every Go function has the row its pcsp delta says. */
static int go_check__func(const struct go_func_sp *f, void *arg)
{
	struct go_check *c = arg;

	if (!strcmp(f->name, "main.hotLoop"))
		c->hot_entry = f->entry;
	if (!strcmp(f->name, "runtime.goexit"))
		c->goexit_entry = f->entry;
	if (f->spwrite && !strcmp(f->name, "runtime.asmcgocall"))
		c->asmcgocall_entry = f->entry;
	if (f->spwrite)
		return 0;
	c->funcs++;
	for (size_t i = 0; i < f->nr; i++) {
		const struct unwind_rule *r = row_at_vaddr(c->path, c->t, f->pc[i]);
		bool ok;

		c->ranges++;
		if (f->topframe)
			ok = r && r->cfa_type == UNWIND_CFA_UNDEFINED;
		else if (f->delta[i] + 8 > UNWIND_ROW_CFA_OFF_MAX)
			/* runtime.call262144 and up (reflect calls with huge frames): too big
			 * for a row, the walk ends there. */
			ok = r && r->cfa_type == UNWIND_CFA_INVALID;
		else
			ok = r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == f->delta[i] + 8 &&
			     r->rbp_type == (f->delta[i] >= 8 ? UNWIND_RBP_OFFSET : UNWIND_RBP_SAME) &&
			     (f->delta[i] < 8 || r->rbp_off == -16);
		if (!ok && c->bad++ < 5)
			fprintf(stderr, "  %s+%#" PRIx64 ": delta %d, row %d/%d\n", f->name,
				f->pc[i] - f->entry, f->delta[i], r ? r->cfa_type : -1,
				r ? r->cfa_off : 0);
	}
	c->topframes += f->topframe;
	c->frameless += f->nr == 1 && !f->delta[0];
	return 0;
}

/* Go code has no CFI: its rows come from the stack deltas of .gopclntab. */
static void check_go_rows(const char *name)
{
	const char *path = fixture(name);
	struct cfi_table t = {};
	struct go_check c = { .path = path, .t = &t };
	struct go_symtab *gs;
	const struct unwind_rule *r;
	int fd;

	if (access(path, R_OK))
		SKIP("%s not built (tests/unit/gosym.mk)", path);
	CHECK_EQ(build_path(path, &t, NULL), 0);
	CHECK(t.nr > 1000);
	CHECK_EQ(t.flags, 0);
	CHECK(sorted(&t));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(go_symtab__open(fd, &gs), 0);
	close(fd);
	CHECK_EQ(go_symtab__for_each_sp(gs, go_check__func, &c), 0);
	go_symtab__free(gs);
	printf("  %s: %u rows, %u functions, %u ranges, %u frameless, %u top frames\n", name,
	       t.nr, c.funcs, c.ranges, c.frameless, c.topframes);
	CHECK(c.funcs > 500);
	CHECK_EQ(c.bad, 0);
	CHECK(c.topframes >= 2); /* runtime.goexit, runtime.mstart, runtime.rt0_go */
	/* A leaf without a frame: the return address is at rsp throughout. */
	CHECK(c.hot_entry != 0);
	r = row_at_vaddr(path, &t, c.hot_entry + 4);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8 &&
	      r->rbp_type == UNWIND_RBP_SAME);
	CHECK(c.goexit_entry != 0);
	r = row_at_vaddr(path, &t, c.goexit_entry + 1);
	CHECK(r && r->cfa_type == UNWIND_CFA_UNDEFINED);
	/* Go 1.19's asmcgocall: the goroutine's stack is found from runtime.cgocall's BP. */
	CHECK(c.asmcgocall_entry != 0);
	r = row_at_vaddr(path, &t, c.asmcgocall_entry + 16);
	CHECK(r && r->cfa_type == UNWIND_CFA_RBP_SWITCH && r->cfa_off < 0 &&
	      r->rbp_type == UNWIND_RBP_SAME);
	cfi_table__release(&t);
}

TEST(go_rows)
{
	check_go_rows("gohello");
}

TEST(go_rows_stripped)
{
	check_go_rows("gohello-stripped");
}

TEST(go_rows_pie)
{
	check_go_rows("gohello-pie");
}

/* The caller's file offset is not moved, the table is released to zero. */
TEST(fd_offset_and_release)
{
	struct cfi_table t = {}, zero = {};
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		SKIP("%s: %s", LIBC, strerror(errno));
	CHECK(lseek(fd, 123, SEEK_SET) == 123);
	CHECK_EQ(cfi__build(fd, &t), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 123);
	close(fd);
	CHECK(t.nr > 1000);
	CHECK_EQ(t.flags, 0);
	cfi_table__release(&t);
	CHECK(!memcmp(&t, &zero, sizeof(t)));
	cfi_table__release(&t);
}

static int write_tmp(char *path, const void *data, size_t size)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -errno;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	return fd;
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	*data = malloc(n ? n : 1);
	*size = n;
	if (!*data || fread(*data, 1, n, f) != (size_t)n) {
		fclose(f);
		free(*data);
		return -EIO;
	}
	fclose(f);
	return 0;
}

TEST(garbage_and_truncated_files)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	char path[] = "/tmp/test_cfi.XXXXXX";
	struct cfi_table t = {};
	uint8_t *elf = NULL;
	size_t size = 0;
	int fd, err;

	fd = write_tmp(path, text, sizeof(text));
	CHECK(fd >= 0);
	CHECK_EQ(cfi__build(fd, &t), -ENOEXEC);
	CHECK(t.nr == 0 && t.rows == NULL);
	close(fd);
	unlink(path);

	strcpy(path, "/tmp/test_cfi.XXXXXX");
	fd = write_tmp(path, NULL, 0);
	CHECK(fd >= 0);
	CHECK_EQ(cfi__build(fd, &t), -ENOEXEC);
	close(fd);
	unlink(path);

	/* glibc cut short at a few places: an error or no rows, never a crash. */
	CHECK(read_file(LIBC, &elf, &size) == 0);
	for (size_t cut = 16; cut < size; cut = cut * 3 + 1) {
		strcpy(path, "/tmp/test_cfi.XXXXXX");
		fd = write_tmp(path, elf, cut);
		if (fd < 0)
			break;
		err = cfi__build(fd, &t);
		close(fd);
		unlink(path);
		if (err == 0 && !sorted(&t)) {
			FAILF("cut at %zu: unsorted rows", cut);
			break;
		}
		cfi_table__release(&t);
	}
	free(elf);
}

/* Every prefix and a few corruptions of glibc's .eh_frame parse without harm. */
TEST(truncated_and_mutated_eh_frame)
{
	const uint8_t *sec = NULL;
	uint64_t sec_addr = 0;
	size_t sec_size = 0, shstrndx;
	Elf_Scn *scn = NULL;
	uint8_t *copy;
	Elf *elf;
	int fd;

	fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		SKIP("%s: %s", LIBC, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf && elf_getshdrstrndx(elf, &shstrndx) == 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".eh_frame")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			sec = d->d_buf;
			sec_size = d->d_size;
			sec_addr = sh.sh_addr;
		}
	}
	CHECK(sec && sec_size > 4096);
	copy = malloc(sec_size);
	CHECK(copy);
	for (size_t cut = 0; cut < sec_size && !test_cur_failed; cut += 1 + cut / 7) {
		struct cfi_builder *b = cfi_builder__new();
		struct cfi_table t = {};
		int nr;

		/* A copy of exactly cut bytes, so ASan would see a read past it. */
		uint8_t *part = malloc(cut ? cut : 1);

		memcpy(part, sec, cut);
		if (cut > 64)
			part[cut / 2] ^= 0x5a; /* and a flipped byte */
		cfi_builder__add_segment(b, 0, 1ull << 32, 0);
		nr = cfi__parse_section(b, part, cut, sec_addr, false);
		if (nr < 0 || cfi_builder__finish(b, &t) || !sorted(&t))
			FAILF("prefix of %zu bytes: %d", cut, nr);
		cfi_table__release(&t);
		cfi_builder__free(b);
		free(part);
	}
	free(copy);
	elf_end(elf);
	close(fd);
}

/* Hand-made CFI: bytes appended to a buffer. */
struct cfi_bytes {
	uint8_t b[512];
	size_t n;
};

static void put(struct cfi_bytes *c, const void *p, size_t n)
{
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void put_u8(struct cfi_bytes *c, uint8_t v)
{
	put(c, &v, 1);
}

static void put_u32(struct cfi_bytes *c, uint32_t v)
{
	put(c, &v, 4);
}

static void put_u64(struct cfi_bytes *c, uint64_t v)
{
	put(c, &v, 8);
}

static void put_uleb(struct cfi_bytes *c, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		put_u8(c, byte | (v ? 0x80 : 0));
	} while (v);
}

static void put_sleb(struct cfi_bytes *c, int64_t v)
{
	bool more = true;

	while (more) {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
		put_u8(c, byte | (more ? 0x80 : 0));
	}
}

/* Pads the entry started at start (its 4-byte length at start) with nops and sets its length. */
static void close_entry(struct cfi_bytes *c, size_t start)
{
	uint32_t len;

	while ((c->n - start) % 8)
		put_u8(c, 0);
	len = c->n - start - 4;
	memcpy(c->b + start, &len, 4);
}

static bool row_is(const struct cfi_table *t, uint64_t off, uint8_t cfa, int32_t cfa_off, uint8_t rbp,
		   int16_t rbp_off)
{
	const struct unwind_rule *r = lookup(t, off);

	return r && r->cfa_type == cfa && r->cfa_off == cfa_off && r->rbp_type == rbp &&
	       r->rbp_off == rbp_off;
}

/*
 * .eh_frame with a "zPLR" CIE (udata8 FDE pointers, an indirect personality), an FDE with an
 * LSDA pointer using every advance and the state stack, then a "zR" CIE with a 64-bit length and
 * sdata2|pcrel pointers whose FDE undefines the return address.
 */
TEST(handmade_eh_frame)
{
	struct cfi_builder *b = cfi_builder__new();
	struct cfi_table t = {};
	struct cfi_bytes c = {};
	size_t cie, fde, cie2;
	const uint64_t base = 0x1800; /* section address, near enough for sdata2 pcrel */

	CHECK(b);
	cie = c.n;
	put_u32(&c, 0);
	put_u32(&c, 0); /* CIE id */
	put_u8(&c, 3);	/* version */
	put(&c, "zPLR", 5);
	put_uleb(&c, 1);   /* code align */
	put_sleb(&c, -8);  /* data align */
	put_uleb(&c, 16);  /* ra */
	put_uleb(&c, 5 + 1 + 1); /* P: encoding + sdata4, L, R */
	put_u8(&c, 0x9b);  /* personality: indirect pcrel sdata4 */
	put_u32(&c, 0x1234);
	put_u8(&c, 0x1b);  /* LSDA: pcrel sdata4 */
	put_u8(&c, 0x04);  /* FDE: udata8 */
	put_u8(&c, 0x0c);  /* def_cfa rsp 8 */
	put_uleb(&c, 7);
	put_uleb(&c, 8);
	put_u8(&c, 0x80 | 16); /* offset ra c-8 */
	put_uleb(&c, 1);
	close_entry(&c, cie);

	fde = c.n;
	put_u32(&c, 0);
	put_u32(&c, c.n - cie); /* CIE pointer */
	put_u64(&c, 0x1000);	/* pc begin */
	put_u64(&c, 0x100);	/* range */
	put_uleb(&c, 4);
	put_u32(&c, 0);		   /* LSDA */
	put_u8(&c, 0x40 | 1);	   /* 0x1001 */
	put_u8(&c, 0x0e);	   /* def_cfa_offset 16 */
	put_uleb(&c, 16);
	put_u8(&c, 0x80 | 6);	   /* rbp at c-16 */
	put_uleb(&c, 2);
	put_u8(&c, 0x02);	   /* advance_loc1 3: 0x1004 */
	put_u8(&c, 3);
	put_u8(&c, 0x0d);	   /* def_cfa_register rbp */
	put_uleb(&c, 6);
	put_u8(&c, 0x0a);	   /* remember_state */
	put_u8(&c, 0x03);	   /* advance_loc2 0x10: 0x1014 */
	put(&c, "\x10\x00", 2);
	put_u8(&c, 0x0c);	   /* def_cfa rsp 8 */
	put_uleb(&c, 7);
	put_uleb(&c, 8);
	put_u8(&c, 0xc0 | 6);	   /* restore rbp */
	put_u8(&c, 0x04);	   /* advance_loc4 4: 0x1018 */
	put_u32(&c, 4);
	put_u8(&c, 0x0b);	   /* restore_state: rbp+16, rbp c-16 */
	put_u8(&c, 0x2e);	   /* GNU_args_size 16 */
	put_uleb(&c, 16);
	put_u8(&c, 0x10);	   /* expression r3 (skipped) */
	put_uleb(&c, 3);
	put_uleb(&c, 2);
	put(&c, "\x77\x08", 2);
	put_u8(&c, 0x01);	   /* set_loc 0x1020 */
	put_u64(&c, 0x1020);
	put_u8(&c, 0x11);	   /* offset_extended_sf rbp -3 * -8 = 24 */
	put_uleb(&c, 6);
	put_sleb(&c, -3);
	put_u8(&c, 0x40 | 8);	   /* 0x1028 */
	put_u8(&c, 0x2f);	   /* GNU_negative_offset_extended rbp 4: c-(-32)?  -(4) * -8 = 32 */
	put_uleb(&c, 6);
	put_uleb(&c, 4);
	put_u8(&c, 0x40 | 8);	   /* 0x1030 */
	put_u8(&c, 0x09);	   /* register rbp in rbx: lost */
	put_uleb(&c, 6);
	put_uleb(&c, 3);
	put_u8(&c, 0x40 | 8);	   /* 0x1038 */
	put_u8(&c, 0x0f);	   /* def_cfa_expression: not the PLT one */
	put_uleb(&c, 2);
	put(&c, "\x77\x10", 2);
	put_u8(&c, 0x40 | 8);	   /* 0x1040 */
	put_u8(&c, 0x12);	   /* def_cfa_sf rsp -2 * -8 = 16 */
	put_uleb(&c, 7);
	put_sleb(&c, -2);
	put_u8(&c, 0x08);	   /* same_value rbp */
	put_uleb(&c, 6);
	close_entry(&c, fde);

	/* 64-bit length CIE: 0xffffffff then 8 bytes, a 4-byte id all the same in .eh_frame. */
	cie2 = c.n;
	put_u32(&c, 0xffffffff);
	put_u64(&c, 0);
	put_u32(&c, 0);
	put_u8(&c, 1);
	put(&c, "zR", 3);
	put_uleb(&c, 1);
	put_sleb(&c, -8);
	put_u8(&c, 16);
	put_uleb(&c, 1);
	put_u8(&c, 0x1a); /* pcrel sdata2 */
	put_u8(&c, 0x0c);
	put_uleb(&c, 7);
	put_uleb(&c, 8);
	while ((c.n - cie2) % 8 != 4)
		put_u8(&c, 0);
	{
		uint64_t len = c.n - cie2 - 12;

		memcpy(c.b + cie2 + 4, &len, 8);
	}
	fde = c.n;
	put_u32(&c, 0);
	put_u32(&c, c.n - cie2);
	{
		/* pc begin 0x2000 relative to this field's address. */
		int16_t rel = (int16_t)(0x2000 - (int64_t)(base + c.n));

		put(&c, &rel, 2);
	}
	put(&c, "\x10\x00", 2); /* range 0x10 */
	put_uleb(&c, 0);
	put_u8(&c, 0x07);	/* undefined ra */
	put_uleb(&c, 16);
	close_entry(&c, fde);
	put_u32(&c, 0); /* terminator */
	put_u32(&c, 0xdeadbeef); /* not read */

	CHECK_EQ(cfi_builder__add_segment(b, 0x1000, 0x2000, 0x10000), 0);
	CHECK_EQ(cfi__parse_section(b, c.b, c.n, base, false), 2);
	CHECK_EQ(cfi_builder__finish(b, &t), 0);
	cfi_builder__free(b);
	CHECK(sorted(&t));
	CHECK(row_is(&t, 0x10000, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x10001, UNWIND_CFA_RSP, 16, UNWIND_RBP_OFFSET, -16));
	CHECK(row_is(&t, 0x10004, UNWIND_CFA_RBP, 16, UNWIND_RBP_OFFSET, -16));
	CHECK(row_is(&t, 0x10014, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x10018, UNWIND_CFA_RBP, 16, UNWIND_RBP_OFFSET, -16));
	CHECK(row_is(&t, 0x10020, UNWIND_CFA_RBP, 16, UNWIND_RBP_OFFSET, 24));
	CHECK(row_is(&t, 0x10028, UNWIND_CFA_RBP, 16, UNWIND_RBP_OFFSET, 32));
	CHECK(row_is(&t, 0x10030, UNWIND_CFA_RBP, 16, UNWIND_RBP_INVALID, 0));
	CHECK(row_is(&t, 0x10038, UNWIND_CFA_INVALID, 0, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x100ff, UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x10100, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x11000, UNWIND_CFA_UNDEFINED, 0, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x1100f, UNWIND_CFA_UNDEFINED, 0, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x11010, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0));
	CHECK(lookup(&t, 0xffff) == NULL);
	cfi_table__release(&t);
}

/* .debug_frame: a version 4 CIE (address size 8), 64-bit DWARF lengths and ids. */
TEST(handmade_debug_frame64)
{
	struct cfi_builder *b = cfi_builder__new();
	struct cfi_table t = {};
	struct cfi_bytes c = {};
	size_t cie, fde;
	uint64_t len;

	CHECK(b);
	cie = c.n;
	put_u32(&c, 0xffffffff);
	put_u64(&c, 0);
	put_u64(&c, UINT64_MAX); /* CIE id */
	put_u8(&c, 4);
	put_u8(&c, 0);		 /* augmentation "" */
	put_u8(&c, 8);		 /* address size */
	put_u8(&c, 0);		 /* segment selector size */
	put_uleb(&c, 4);	 /* code align 4 */
	put_sleb(&c, -8);
	put_uleb(&c, 16);
	put_u8(&c, 0x0c);
	put_uleb(&c, 7);
	put_uleb(&c, 8);
	len = c.n - cie - 12;
	memcpy(c.b + cie + 4, &len, 8);
	fde = c.n;
	put_u32(&c, 0xffffffff);
	put_u64(&c, 0);
	put_u64(&c, cie);	/* CIE offset in the section */
	put_u64(&c, 0x5000);	/* absolute */
	put_u64(&c, 0x40);
	put_u8(&c, 0x40 | 2);	/* 2 * code align: 0x5008 */
	put_u8(&c, 0x0e);
	put_uleb(&c, 32);
	put_u8(&c, 0x0a);	/* remember_state: unbalanced, harmless */
	len = c.n - fde - 12;
	memcpy(c.b + fde + 4, &len, 8);

	CHECK_EQ(cfi_builder__add_segment(b, 0x5000, 0x1000, 0x5000), 0);
	CHECK_EQ(cfi__parse_section(b, c.b, c.n, 0, true), 1);
	CHECK_EQ(cfi_builder__finish(b, &t), 0);
	cfi_builder__free(b);
	CHECK_EQ(t.nr, 3);
	CHECK(row_is(&t, 0x5000, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x5008, UNWIND_CFA_RSP, 32, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x5040, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0));
	cfi_table__release(&t);
}

/*
 * Gaps between FDEs end in NONE rows, adjacent FDEs do not; an FDE overlapping the next one
 * (malformed) is cut where the next starts; ranges outside the executable segments are dropped.
 */
TEST(gaps_and_overlaps)
{
	static const struct unwind_rule r8 = { .cfa_type = UNWIND_CFA_RSP, .cfa_off = 8 };
	static const struct unwind_rule r16 = { .cfa_type = UNWIND_CFA_RSP, .cfa_off = 16 };
	struct cfi_builder *b = cfi_builder__new();
	struct cfi_table t = {};

	CHECK(b);
	CHECK_EQ(cfi_builder__add_segment(b, 0, 0x10000, 0), 0);
	CHECK_EQ(cfi_builder__add_synthetic(b, 0x100, 0x100, &r16), 0); /* cut at 0x180 */
	CHECK_EQ(cfi_builder__add_synthetic(b, 0x300, 0x10, &r16), 0);
	CHECK_EQ(cfi_builder__add_synthetic(b, 0x180, 0x10, &r8), 0);
	CHECK_EQ(cfi_builder__add_synthetic(b, 0x190, 0x10, &r16), 0);
	CHECK_EQ(cfi_builder__add_synthetic(b, 0x20000, 0x10, &r16), 0); /* outside: dropped */
	CHECK_EQ(cfi_builder__finish(b, &t), 0);
	cfi_builder__free(b);
	/* 0x100 r16, 0x180 r8, 0x190 r16, 0x1a0 none, 0x300 r16, 0x310 none */
	CHECK_EQ(t.nr, 6);
	CHECK(row_is(&t, 0x100, UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x180, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x19f, UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x1a0, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x305, UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0));
	CHECK(row_is(&t, 0x310, UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0));
	cfi_table__release(&t);
}

/*
 * A row holds its rule in one word (bpf/unwind_abi.h): every rule the parsers make round-trips
 * through it, at the edges of each field too; one it cannot hold (a frame past 256 KiB, a saved
 * rbp not 8-aligned or past 1 KiB) is invalid, so the walk ends there rather than guess.
 */
TEST(rules_pack_into_rows)
{
	static const struct unwind_rule fits[] = {
		{ .cfa_type = UNWIND_CFA_RSP, .cfa_off = 8 },
		{ .cfa_type = UNWIND_CFA_RSP, .cfa_off = UNWIND_ROW_CFA_OFF_MAX },
		{ .cfa_type = UNWIND_CFA_RBP, .cfa_off = 16, .rbp_type = UNWIND_RBP_OFFSET,
		  .rbp_off = -16 },
		{ .cfa_type = UNWIND_CFA_RBP, .cfa_off = -UNWIND_ROW_CFA_OFF_MAX,
		  .rbp_type = UNWIND_RBP_OFFSET, .rbp_off = -UNWIND_ROW_RBP_OFF_MAX },
		{ .cfa_type = UNWIND_CFA_RSP, .cfa_off = 4096, .rbp_type = UNWIND_RBP_OFFSET,
		  .rbp_off = UNWIND_ROW_RBP_OFF_MAX },
		{ .cfa_type = UNWIND_CFA_PLT, .cfa_off = 11 },
		{ .cfa_type = UNWIND_CFA_RBP_SWITCH, .cfa_off = 16, .rbp_type = UNWIND_RBP_INVALID },
		{ .cfa_type = UNWIND_CFA_SIGNAL },
		{ .cfa_type = UNWIND_CFA_NONE },
		{ .cfa_type = UNWIND_CFA_UNDEFINED },
		{ .cfa_type = UNWIND_CFA_INVALID, .rbp_type = UNWIND_RBP_INVALID },
	};
	static const struct unwind_rule too_big[] = {
		{ .cfa_type = UNWIND_CFA_RSP, .cfa_off = UNWIND_ROW_CFA_OFF_MAX + 1 },
		{ .cfa_type = UNWIND_CFA_RBP, .cfa_off = -UNWIND_ROW_CFA_OFF_MAX - 1 },
		{ .cfa_type = UNWIND_CFA_RSP, .cfa_off = 16, .rbp_type = UNWIND_RBP_OFFSET,
		  .rbp_off = -12 },
		{ .cfa_type = UNWIND_CFA_RSP, .cfa_off = 16, .rbp_type = UNWIND_RBP_OFFSET,
		  .rbp_off = -UNWIND_ROW_RBP_OFF_MAX - 8 },
	};

	for (size_t i = 0; i < sizeof(fits) / sizeof(fits[0]); i++) {
		struct unwind_row row = { .pc = 0x1234, .rule = unwind_rule__pack(&fits[i]) };
		struct unwind_rule r = unwind_row__rule(&row);

		if (memcmp(&r, &fits[i], sizeof(r)))
			FAILF("rule %zu: type %u off %d rbp %u %d came back type %u off %d rbp %u %d", i,
			      fits[i].cfa_type, fits[i].cfa_off, fits[i].rbp_type, fits[i].rbp_off,
			      r.cfa_type, r.cfa_off, r.rbp_type, r.rbp_off);
	}
	for (size_t i = 0; i < sizeof(too_big) / sizeof(too_big[0]); i++) {
		struct unwind_row row = { .rule = unwind_rule__pack(&too_big[i]) };

		CHECK_EQ(unwind_row__rule(&row).cfa_type, UNWIND_CFA_INVALID);
	}
}

int main(void)
{
	RUN(readelf_glibc);
	RUN(loader_entry_is_outermost);
	RUN(readelf_libstdcxx);
	RUN(readelf_c_fixture);
	RUN(readelf_cxx_exceptions);
	RUN(readelf_nopie);
	RUN(readelf_debug_frame);
	RUN(readelf_debug_frame_compressed);
	RUN(glibc_restore_rt_signal);
	RUN(start_is_outermost);
	RUN(plt_rows);
	RUN(synthesized_plt_rows);
	RUN(go_rows);
	RUN(go_rows_stripped);
	RUN(go_rows_pie);
	RUN(fd_offset_and_release);
	RUN(garbage_and_truncated_files);
	RUN(truncated_and_mutated_eh_frame);
	RUN(handmade_eh_frame);
	RUN(handmade_debug_frame64);
	RUN(gaps_and_overlaps);
	RUN(rules_pack_into_rows);
	return test_summary();
}
