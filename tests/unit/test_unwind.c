/* DEPS: src/unwind/unwind.c src/unwind/cfi.c src/symbolize/dso.c src/symbolize/objsym.c src/symbolize/dwarf.c src/symbolize/gosym.c src/symbolize/perfmap.c src/symbolize/debuginfo.c src/symbolize/demangle.c src/symbolize/elf.c src/collect/collect.c src/collect/tracectx.c src/collect/golabels.c src/symbolize/proctab.c src/symbolize/procctx.c gen/opentelemetry/proto/processcontext/v1development/process_context.pb-c.c gen/opentelemetry/proto/resource/v1/resource.pb-c.c gen/opentelemetry/proto/common/v1/common.pb-c.c src/symbolize/symbolizer.c src/symbolize/kallsyms.c src/symbolize/maps.c src/lib/strtab.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwinder's BPF maps as BPF reads them: per-file tables built once and shared, process
 * mapping tables, the memory bound with its evictions, the idle-file cache. Real maps (needs
 * CAP_BPF), real files (glibc, libstdc++), rows checked against cfi__build of the same file.
 */
#include <fcntl.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/unwind.h"
#include "src/symbolize/dso_priv.h"
#include "src/symbolize/proctab.h"
#include "src/unwind/cfi.h"
#include "src/unwind/unwind.h"
#include "testlib.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

static struct dso *elf_dso(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? NULL : dso__new(DSO_ELF, path, fd);
}

static uint32_t rows_of(const char *path)
{
	struct cfi_table t = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint32_t n = 0;

	if (fd >= 0 && !cfi__build(fd, &t))
		n = t.nr;
	cfi_table__release(&t);
	if (fd >= 0)
		close(fd);
	return n;
}

static struct unwinder *new_unwinder_share(uint64_t bytes, uint32_t share)
{
	int err;

	return unwinder__new(&(struct unwinder_opts){ .memory_limit = bytes,
						       .max_processes = 64,
						       .big_table_share = share },
			     &err);
}

static struct unwinder *new_unwinder(uint64_t bytes)
{
	return new_unwinder_share(bytes, 0);
}

static int lookup_proc(struct unwinder *u, uint32_t pid, struct unwind_proc *v)
{
	return bpf_map_lookup_elem(unwinder__map_fd(u, "unwind_procs"), &pid, v);
}

static int lookup_file(struct unwinder *u, uint32_t slot, struct unwind_file *v)
{
	return bpf_map_lookup_elem(unwinder__map_fd(u, "unwind_files"), &slot, v);
}

/* Index of the last row at or before off, by a full search; -1 if none. */
static int last_row_at(const struct cfi_table *t, uint32_t off)
{
	int r = -1;

	for (uint32_t i = 0; i < t->nr && t->rows[i].pc <= off; i++)
		r = (int)i;
	return r;
}

/* What bpf/unwind.bpf.h's unwind__find_row answers, from the maps it reads. */
static int find_row_like_bpf(struct unwinder *u, const struct unwind_file *f, uint32_t off)
{
	int rows_fd = unwinder__map_fd(u, "unwind_rows"), pages_fd = unwinder__map_fd(u, "unwind_pages");
	uint32_t page = off >> UNWIND_PAGE_SHIFT, k, lo, hi, start, v;
	struct unwind_row r;

	if (page < f->first_page)
		return -1;
	k = page - f->first_page;
	hi = f->row_start + f->row_count;
	if (k >= f->page_count) {
		lo = hi - 1;
	} else {
		k += f->page_start;
		if (bpf_map_lookup_elem(pages_fd, &k, &lo))
			return -2;
		k++;
		if (k < f->page_start + f->page_count) {
			if (bpf_map_lookup_elem(pages_fd, &k, &v))
				return -2;
			hi = v + 1;
		}
	}
	start = lo;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (bpf_map_lookup_elem(rows_fd, &mid, &r))
			return -2;
		if (r.pc <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == start ? -1 : (int)lo - 1;
}

TEST(shared_table_matches_cfi)
{
	struct dso *libc = elf_dso(LIBC);
	struct unwinder *u = new_unwinder(16 << 20);
	struct cfi_table t = { 0 };
	struct unwinder_stats s;
	struct unwind_proc v;
	struct unwind_file f;
	struct unwind_row r;
	uint32_t key;

	CHECK(libc && u);
	/* Two processes, libc at different addresses (ASLR), one table. */
	unwinder__update(u, 100,
			 (struct proc_map[]){ { 0x7f0000028000, 0x7f000017d000, 0x28000, libc } }, 1);
	unwinder__wait_idle(u);
	unwinder__update(u, 200,
			 (struct proc_map[]){ { 0x7f1000028000, 0x7f100017d000, 0x28000, libc } }, 1);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.builds, 1);
	CHECK_EQ(s.files, 1);
	CHECK_EQ(s.processes, 2);
	CHECK(!lookup_proc(u, 100, &v));
	CHECK_EQ(v.nr, 1);
	CHECK_EQ(v.maps[0].start, 0x7f0000028000);
	CHECK_EQ(v.maps[0].len, 0x155000);
	CHECK_EQ(v.maps[0].file_off, 0x28000);
	key = v.maps[0].file;
	CHECK(!lookup_proc(u, 200, &v));
	CHECK_EQ(v.maps[0].file, key);
	CHECK(!lookup_file(u, key, &f));

	CHECK(!cfi__build(libc->fd, &t));
	CHECK_EQ(f.row_count, t.nr);
	CHECK_EQ(f.first_page, t.rows[0].pc >> UNWIND_PAGE_SHIFT);
	CHECK_EQ(f.page_count, (t.rows[t.nr - 1].pc >> UNWIND_PAGE_SHIFT) - f.first_page + 1);
	CHECK_EQ(s.row_bytes, (uint64_t)t.nr * sizeof(struct unwind_row) +
				      (uint64_t)f.page_count * sizeof(uint32_t));
	/* Every offset finds, through the page index, the row a full search finds. */
	for (uint32_t off = t.rows[0].pc; off < t.rows[t.nr - 1].pc + 64; off += 61) {
		int want = last_row_at(&t, off), got = find_row_like_bpf(u, &f, off);

		if (got != (want < 0 ? -1 : (int)f.row_start + want))
			FAILF("offset 0x%x: row %d through the page index, %d by full search", off,
			      got, want);
	}
	/* First, middle and last rows are the builder's. */
	for (uint32_t i = 0; i < t.nr; i += t.nr / 2 ? t.nr / 2 : 1) {
		key = f.row_start + i;
		CHECK(!bpf_map_lookup_elem(unwinder__map_fd(u, "unwind_rows"), &key, &r));
		CHECK(!memcmp(&r, &t.rows[i], sizeof(r)));
	}
	cfi_table__release(&t);

	/* One process gone: the other keeps the table. */
	unwinder__update(u, 100, NULL, 0);
	unwinder__wait_idle(u);
	CHECK(lookup_proc(u, 100, &v));
	unwinder__stats(u, &s);
	CHECK_EQ(s.processes, 1);
	CHECK_EQ(s.files, 1);
	unwinder__free(u);
	dso__put(libc);
}

TEST(idle_table_reused)
{
	struct dso *libc = elf_dso(LIBC);
	struct unwinder *u = new_unwinder(16 << 20);
	struct proc_map m = { 0x7f0000028000, 0x7f000017d000, 0x28000, libc };
	struct unwinder_stats s;

	CHECK(libc && u);
	unwinder__update(u, 100, &m, 1);
	unwinder__wait_idle(u);
	unwinder__update(u, 100, NULL, 0);
	unwinder__wait_idle(u);
	/* A short-lived process mapping it next finds the table ready. */
	unwinder__update(u, 101, &m, 1);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.builds, 1);
	CHECK_EQ(s.files, 1);
	CHECK_EQ(s.processes, 1);
	unwinder__free(u);
	dso__put(libc);
}

TEST(memory_limit_evicts_lru)
{
	struct dso *libc = elf_dso(LIBC), *cxx = elf_dso(LIBSTDCXX);
	uint32_t nc = rows_of(LIBC), nx = rows_of(LIBSTDCXX);
	struct unwinder *u;
	struct unwinder_stats s;
	struct unwind_proc v;
	struct unwind_file f;

	if (!cxx)
		SKIP("no %s", LIBSTDCXX);
	CHECK(libc && nc && nx);
	/* Room for the larger of the two, not for both; any table may evict one in use. */
	u = new_unwinder_share((uint64_t)(nc > nx ? nc : nx) * sizeof(struct unwind_row), 1);
	CHECK(u);
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc } }, 1);
	unwinder__wait_idle(u);
	unwinder__update(u, 200, (struct proc_map[]){ { 0x10000, 0x20000, 0, cxx } }, 1);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.evictions, 1);
	CHECK_EQ(s.files, 1);
	CHECK(s.row_bytes > (uint64_t)nx * sizeof(struct unwind_row));
	CHECK(s.row_bytes <= s.capacity_bytes);
	/* pid 100's libc frames now fall back to frame pointers: no rows for BPF. */
	CHECK(!lookup_proc(u, 100, &v));
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, 0);
	CHECK(!lookup_proc(u, 200, &v));
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, nx);
	/* pid 100 reads its maps again: libc's table comes back only into free or idle room, never
	 * by evicting a table in use (two working sets over budget would evict each other). */
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc } }, 1);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.evictions, 1);
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, nx);
	/* Once libstdc++ is idle, libc's table comes back at the next read. */
	unwinder__update(u, 200, NULL, 0);
	unwinder__wait_idle(u);
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc } }, 1);
	unwinder__wait_idle(u);
	CHECK(!lookup_proc(u, 100, &v));
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, nc);
	unwinder__free(u);
	dso__put(libc);
	dso__put(cxx);
}

TEST(big_table_never_blinds_the_rest)
{
	struct dso *libc = elf_dso(LIBC), *cxx = elf_dso(LIBSTDCXX);
	uint32_t nc = rows_of(LIBC), nx = rows_of(LIBSTDCXX);
	struct unwinder *u;
	struct unwinder_stats s;
	struct unwind_proc v;
	struct unwind_file f;

	if (!cxx)
		SKIP("no %s", LIBSTDCXX);
	CHECK(libc && nc && nx);
	/* Both are over an eighth of a budget that holds one of them. */
	u = new_unwinder((uint64_t)(nc > nx ? nc : nx) * sizeof(struct unwind_row));
	CHECK(u);
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc } }, 1);
	unwinder__wait_idle(u);
	unwinder__update(u, 200, (struct proc_map[]){ { 0x10000, 0x20000, 0, cxx } }, 1);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.evictions, 0);
	CHECK_EQ(s.files, 1);
	CHECK(!lookup_proc(u, 200, &v));
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, 0);
	/* libc's process exits: maintenance gives libstdc++ the room, evicting only idle libc. */
	unwinder__maintain(u);
	unwinder__wait_idle(u);
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, 0);
	unwinder__update(u, 100, NULL, 0);
	unwinder__wait_idle(u);
	unwinder__maintain(u);
	unwinder__wait_idle(u);
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, nx);
	unwinder__free(u);
	dso__put(libc);
	dso__put(cxx);
}

TEST(table_larger_than_budget)
{
	struct dso *libc = elf_dso(LIBC);
	struct unwinder *u = new_unwinder(64 << 10);
	struct unwinder_stats s;
	struct unwind_proc v;
	struct unwind_file f;

	CHECK(libc && u);
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc } }, 1);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.too_big, 1);
	CHECK_EQ(s.row_bytes, 0);
	CHECK(!lookup_proc(u, 100, &v));
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, 0);
	CHECK(f.flags & UNWIND_FILE_FP);
	unwinder__free(u);
	dso__put(libc);
}

TEST(anonymous_code_and_many_mappings)
{
	struct dso *jit = dso__new(DSO_ANON, "[jit]", -1);
	struct unwinder *u = new_unwinder(1 << 20);
	struct proc_map maps[UNWIND_MAX_MAPPINGS + 10];
	struct unwinder_stats s;
	struct unwind_proc v;

	CHECK(jit && u);
	for (uint32_t i = 0; i < UNWIND_MAX_MAPPINGS + 10; i++)
		maps[i] = (struct proc_map){ 0x100000 + i * 0x2000, 0x101000 + i * 0x2000, 0, jit };
	unwinder__update(u, 100, maps, UNWIND_MAX_MAPPINGS + 10);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.maps_truncated, 1);
	CHECK(!lookup_proc(u, 100, &v));
	CHECK_EQ(v.nr, UNWIND_MAX_MAPPINGS);
	/* JIT code has no table: frame pointers. */
	CHECK_EQ(v.maps[0].file, UNWIND_NO_FILE);
	CHECK_EQ(v.maps[UNWIND_MAX_MAPPINGS - 1].start, 0x100000 + (UNWIND_MAX_MAPPINGS - 1) * 0x2000);
	unwinder__free(u);
	dso__put(jit);
}

int main(void)
{
	RUN(shared_table_matches_cfi);
	RUN(idle_table_reused);
	RUN(memory_limit_evicts_lru);
	RUN(big_table_never_blinds_the_rest);
	RUN(table_larger_than_budget);
	RUN(anonymous_code_and_many_mappings);
	return test_summary();
}
