/* DEPS: src/unwind/unwind.c src/unwind/chunks.c src/unwind/extents.c src/unwind/walk_copy.c src/unwind/cfi.c src/unwind/cfi_builder.c src/unwind/gocfi.c src/symbolize/dso.c src/symbolize/objsym.c src/symbolize/dwarf.c src/symbolize/dwarf_cu.c src/lib/array.c src/symbolize/gosym.c src/symbolize/perfmap.c src/symbolize/debuginfo.c src/symbolize/demangle.c src/symbolize/elf.c src/lib/counters.c src/proc/proctab.c src/proc/container.c src/proc/procctx.c gen/opentelemetry/proto/processcontext/v1development/process_context.pb-c.c gen/opentelemetry/proto/resource/v1/resource.pb-c.c gen/opentelemetry/proto/common/v1/common.pb-c.c src/symbolize/symbolizer.c src/symbolize/kallsyms.c src/lib/buf.c src/lib/procmaps.c src/lib/strtab.c src/lib/log.c src/lib/procmem.c src/lib/ufile.c src/lib/procfs.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwinder's BPF maps as BPF reads them: per-file tables built once and shared, process
 * mapping tables, the memory bound with its evictions, the idle-file cache. Real maps (needs
 * CAP_BPF), real files (glibc, libstdc++), rows checked against cfi__build of the same file.
 * And user space walking copies of this process's own stack with those tables (walk_copy.c).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/unwind_abi.h"
#include "src/symbolize/dso_priv.h"
#include "src/proc/proctab.h"
#include "src/unwind/cfi.h"
#include "src/unwind/chunks.h"
#include "src/unwind/extents.h"
#include "src/unwind/unwind.h"
#include "src/unwind/unwind_priv.h"
#include "stackcopy.h"
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

/* Element idx of the rows and page index as BPF reads it, through the kernel: the chunk the
 * outer map holds (its id), then the element in it. */
static int lookup_elem(struct unwinder *u, uint32_t idx, void *v)
{
	uint32_t c = idx / UNWIND_CHUNK_ELEMS, k = idx % UNWIND_CHUNK_ELEMS, id;
	int fd, err;

	if (bpf_map_lookup_elem(unwinder__map_fd(u, "unwind_chunks"), &c, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	err = bpf_map_lookup_elem(fd, &k, v) ? -errno : 0;
	close(fd);
	return err;
}

/* Index of the last row at or before off, by a full search; -1 if none. */
static int last_row_at(const struct cfi_table *t, uint32_t off)
{
	int r = -1;

	for (uint32_t i = 0; i < t->nr && t->rows[i].pc <= off; i++)
		r = (int)i;
	return r;
}

TEST(shared_table_matches_cfi)
{
	struct dso *libc = elf_dso(LIBC);
	struct unwinder *u = new_unwinder(16 << 20);
	struct cfi_table t = { 0 };
	struct unwinder_stats s;
	struct unwind_proc v;
	struct unwind_file f;
	const struct unwind_tables *tab;
	struct unwind_row r;
	struct unwind_page_pair pair;
	uint64_t chunks;
	uint32_t key;
	int want;

	CHECK(libc && u);
	tab = unwinder__tables(u);
	CHECK(tab->elems && tab->files);
	/* Before any table, the first chunk alone. */
	unwinder__stats(u, &s);
	CHECK(s.allocated_bytes >= (uint64_t)UNWIND_CHUNK_ELEMS * 8);
	CHECK(s.allocated_bytes < (uint64_t)UNWIND_CHUNK_ELEMS * 8 * 2);
	/* Two processes, libc at different addresses (ASLR), one table. */
	unwinder__update(u, 100,
			 (struct proc_map[]){ { 0x7f0000028000, 0x7f000017d000, 0x28000, libc, 0, 0 } }, 1);
	unwinder__wait_idle(u);
	unwinder__update(u, 200,
			 (struct proc_map[]){ { 0x7f1000028000, 0x7f100017d000, 0x28000, libc, 0, 0 } }, 1);
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
	/* The file's page index, then its rows, in one run of elements. */
	CHECK_EQ(f.page_start / 2 + (f.page_count + 1) / 2, f.row_start);
	CHECK_EQ(s.row_bytes, (uint64_t)t.nr * sizeof(struct unwind_row) +
				      (uint64_t)(f.page_count + 1) / 2 * sizeof(struct unwind_page_pair));
	/* Chunks are made as far as the tables reach (first fit from 0), not for the budget. */
	chunks = (s.row_bytes / 8 + UNWIND_CHUNK_ELEMS - 1) / UNWIND_CHUNK_ELEMS;
	/* (Each as the kernel counts it: its elements, and a page or so of header.) */
	CHECK(s.allocated_bytes >= chunks * UNWIND_CHUNK_ELEMS * 8);
	CHECK(s.allocated_bytes < (chunks + 1) * UNWIND_CHUNK_ELEMS * 8);
	CHECK(s.allocated_bytes < s.capacity_bytes / 4);
	/* Every offset finds, through the page index (bpf/unwind_step.h's search, over the
	 * arrays BPF reads), the row a full search finds. */
	for (uint32_t off = t.rows[0].pc; off < t.rows[t.nr - 1].pc + 64; off += 61) {
		int want = last_row_at(&t, off), got = unwinder__find_row(u, &f, off);

		if (got != (want < 0 ? -1 : (int)f.row_start + want))
			FAILF("offset 0x%x: row %d through the page index, %d by full search", off,
			      got, want);
	}
	/* First, middle and last rows are the builder's. */
	for (uint32_t i = 0; i < t.nr; i += t.nr / 2 ? t.nr / 2 : 1) {
		key = f.row_start + i;
		CHECK(!lookup_elem(u, key, &r));
		CHECK(!memcmp(&r, &t.rows[i], sizeof(r)));
		/* And so are the mapped chunks user space walks with, element for element. */
		CHECK(!memcmp(&r, chunks__elem(tab->elems, key), sizeof(r)));
		CHECK(!memcmp(&t.rows[i + 1 < t.nr ? i + 1 : i],
			      chunks__elem(tab->elems, key + (i + 1 < t.nr)), sizeof(r)));
	}
	CHECK(!memcmp(&f, (const char *)tab->files + v.maps[0].file * UNWIND_FILE_STRIDE,
		      sizeof(f)));
	/* Two page entries an element, from an even start (bpf/unwind_abi.h). */
	CHECK_EQ(f.page_start % 2, 0);
	for (uint32_t k = 0; k < f.page_count; k += 97) {
		key = (f.page_start + k) / 2;
		CHECK(!lookup_elem(u, key, &pair));
		CHECK(!memcmp(chunks__elem(tab->elems, key), &pair, sizeof(pair)));
		/* The entry is the row covering the page's first byte (the first row if none). */
		want = last_row_at(&t, (f.first_page + k) << UNWIND_PAGE_SHIFT);
		CHECK_EQ(pair.row[(f.page_start + k) & 1], f.row_start + (want < 0 ? 0 : want));
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

/* A budget capped (the kernel made no more chunks) keeps the free ranges below the cap only. */
TEST(extents_cap_drops_room_past_it)
{
	struct extents x;

	CHECK_EQ(extents__init(&x, 1000), 0);
	CHECK_EQ(extents__alloc(&x, 100), 0);
	CHECK_EQ(extents__alloc(&x, 100), 100);
	extents__release(&x, 0, 100);
	/* Free: [0, 100) and [200, 1000). */
	extents__cap(&x, 500);
	CHECK_EQ(x.capacity, 500);
	CHECK_EQ(extents__free_count(&x), 100 + 300);
	CHECK_EQ(extents__alloc(&x, 301), UINT32_MAX);
	CHECK_EQ(extents__alloc(&x, 300), 200);
	/* A larger cap changes nothing. */
	extents__cap(&x, 800);
	CHECK_EQ(x.capacity, 500);
	CHECK_EQ(extents__free_count(&x), 100);
	extents__exit(&x);
}

TEST(idle_table_reused)
{
	struct dso *libc = elf_dso(LIBC);
	struct unwinder *u = new_unwinder(16 << 20);
	struct proc_map m = { 0x7f0000028000, 0x7f000017d000, 0x28000, libc, 0, 0 };
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
	CHECK_EQ(s.reuses, 1);
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
	u = new_unwinder_share((uint64_t)(nc > nx ? nc : nx) * UNWINDER_ROW_BYTES, 1);
	CHECK(u);
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc, 0, 0 } }, 1);
	unwinder__wait_idle(u);
	unwinder__update(u, 200, (struct proc_map[]){ { 0x10000, 0x20000, 0, cxx, 0, 0 } }, 1);
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
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc, 0, 0 } }, 1);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.evictions, 1);
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, nx);
	/* Once libstdc++ is idle, libc's table comes back at the next read. */
	unwinder__update(u, 200, NULL, 0);
	unwinder__wait_idle(u);
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc, 0, 0 } }, 1);
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
	u = new_unwinder((uint64_t)(nc > nx ? nc : nx) * UNWINDER_ROW_BYTES);
	CHECK(u);
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc, 0, 0 } }, 1);
	unwinder__wait_idle(u);
	unwinder__update(u, 200, (struct proc_map[]){ { 0x10000, 0x20000, 0, cxx, 0, 0 } }, 1);
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
	unwinder__update(u, 100, (struct proc_map[]){ { 0x10000, 0x20000, 0, libc, 0, 0 } }, 1);
	unwinder__wait_idle(u);
	unwinder__stats(u, &s);
	CHECK_EQ(s.too_big, 1);
	CHECK_EQ(s.row_bytes, 0);
	CHECK(!lookup_proc(u, 100, &v));
	CHECK(!lookup_file(u, v.maps[0].file, &f));
	CHECK_EQ(f.row_count, 0);
	CHECK(f.flags & UNWIND_FILE_NO_ROOM); /* walks stop there, marked */
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
		maps[i] = (struct proc_map){ 0x100000 + i * 0x2000, 0x101000 + i * 0x2000, 0, jit, 0, 0 };
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

/* Walking copies of this process's own stack (tests/unit/stackcopy.h). */

static uint32_t walk(struct self *e, const struct unwind_proc *proc, size_t len, uint64_t *pcs,
		     uint32_t max, bool *truncated)
{
	return unwinder__walk_copy(e->u, proc, cap.pc, cap.sp, cap.bp, cap.copy, len, pcs, max,
				   truncated);
}

/* Offset in the copy of the stack slot holding a return address, 0 if none does. */
static size_t slot_of(uint64_t ra)
{
	for (size_t off = 0; off + 8 <= cap.len; off += 8)
		if (!memcmp(cap.copy + off, &ra, 8))
			return off;
	return 0;
}

static bool in_libc(uint64_t pc)
{
	Dl_info info;

	return dladdr((void *)pc, &info) && info.dli_fname && strstr(info.dli_fname, "libc.so");
}

static int index_of(const uint64_t *pcs, uint32_t n, uint64_t pc)
{
	for (uint32_t i = 0; i < n; i++)
		if (pcs[i] == pc)
			return (int)i;
	return -1;
}

TEST(walk_copy_through_qsort)
{
	uint64_t pcs[WALK_MAX], fp[WALK_MAX];
	struct self e;
	bool truncated;
	uint32_t n, nfp;
	int j;

	CHECK(!self_init(&e));
	CHECK(!unwinder__proc(e.u, (uint32_t)getpid(), &e.proc));
	CHECK_EQ(unwinder__proc(e.u, 1u << 30, &e.proc), -ENOENT);
	CHECK(!unwinder__proc(e.u, (uint32_t)getpid(), &e.proc));
	ra_test = (uint64_t)__builtin_return_address(0);
	sink = chain_a(1);
	CHECK(cap.len > 256);
	n = walk(&e, &e.proc, cap.len, pcs, WALK_MAX, &truncated);
	if (truncated)
		FAILF("truncated after %u frames", n);
	/* leaf, cmp_ints, qsort's frames in glibc, chain_b, chain_a, this test, main, glibc's
	 * start, _start. */
	CHECK(n >= 9 && n < 20);
	CHECK_EQ(pcs[0], cap.pc);
	CHECK_EQ(pcs[1], ra_leaf);
	CHECK_EQ(pcs[2], ra_cmp);
	j = index_of(pcs, n, ra_b);
	CHECK(j >= 4);
	for (int i = 2; i < j - 1; i++)
		if (!in_libc(pcs[i]))
			FAILF("frame %d (0x%" PRIx64 ") is not qsort's, in glibc", i, pcs[i]);
	/* qsort's return address, in chain_b. */
	CHECK(pcs[j - 1] > (uint64_t)chain_b && pcs[j - 1] < (uint64_t)chain_b + 256);
	CHECK((uint32_t)j + 3 < n);
	CHECK_EQ(pcs[j + 1], ra_a);
	CHECK_EQ(pcs[j + 2], ra_test);
	CHECK_EQ(pcs[j + 3], ra_main);
	CHECK(in_libc(pcs[j + 4]));

	/* Frame pointers alone (no mapping table) lose the chain at once: the tables did it. */
	nfp = walk(&e, NULL, cap.len, fp, WALK_MAX, &truncated);
	CHECK(nfp < 2 || fp[1] != ra_leaf);

	/* Fewer slots than frames: the first ones, truncated. */
	CHECK_EQ(walk(&e, &e.proc, cap.len, fp, 3, &truncated), 3);
	CHECK(truncated);
	CHECK(!memcmp(fp, pcs, 3 * sizeof(*fp)));
	/* A copy cut short: the frames it holds, truncated; an empty one: the pc alone. */
	CHECK(slot_of(ra_b) > 0);
	CHECK_EQ(walk(&e, &e.proc, slot_of(ra_b) + 7, fp, WALK_MAX, &truncated), j);
	CHECK(truncated);
	CHECK(!memcmp(fp, pcs, j * sizeof(*fp)));
	CHECK_EQ(walk(&e, &e.proc, slot_of(ra_b) + 8, fp, WALK_MAX, &truncated), j + 1);
	CHECK(truncated);
	nfp = walk(&e, &e.proc, 64, fp, WALK_MAX, &truncated);
	CHECK(truncated && nfp >= 1 && nfp <= 3);
	CHECK(!memcmp(fp, pcs, nfp * sizeof(*fp)));
	CHECK_EQ(walk(&e, &e.proc, 0, fp, WALK_MAX, &truncated), 1);
	CHECK(truncated);
	self_fini(&e);
}

TEST(walk_copy_frame_pointers_without_table)
{
	uint64_t pcs[WALK_MAX];
	struct unwind_proc proc;
	struct self e;
	bool truncated;
	uint32_t n, k = 0;

	CHECK(!self_init(&e));
	ra_test = (uint64_t)__builtin_return_address(0);
	sink = fp_outer(1);
	/* The test binary as JIT code: no table, frame pointers through it. */
	proc = e.proc;
	for (uint32_t i = 0; i < proc.nr; i++) {
		struct unwind_mapping *m = &proc.maps[i];

		if ((uint64_t)fp_inner - m->start < m->len) {
			m->file = UNWIND_NO_FILE;
			k++;
		}
	}
	CHECK_EQ(k, 1);
	n = walk(&e, &proc, cap.len, pcs, WALK_MAX, &truncated);
	CHECK(!truncated);
	CHECK(n >= 6 && n < 12);
	CHECK_EQ(pcs[0], cap.pc);
	CHECK_EQ(pcs[1], ra_fp_inner);
	CHECK_EQ(pcs[2], ra_fp_outer);
	CHECK_EQ(pcs[3], ra_test);
	CHECK_EQ(pcs[4], ra_main);
	/* Back to glibc's table from a frame-pointer frame. */
	CHECK(in_libc(pcs[5]));

	/* The NO_FP chain has no frame pointers: without its table it cannot be walked. */
	sink = chain_a(1);
	n = walk(&e, &proc, cap.len, pcs, WALK_MAX, &truncated);
	CHECK(n < 2 || pcs[1] != ra_leaf);
	self_fini(&e);
}

TEST(walk_copy_through_signal_frame)
{
	/* __restore_rt: mov $15 (rt_sigreturn), %rax; syscall */
	static const unsigned char restorer[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00,
						  0x00, 0x00, 0x0f, 0x05 };
	struct sigaction sa = { .sa_handler = on_signal }, old;
	uint64_t pcs[WALK_MAX];
	struct self e;
	bool truncated;
	uint32_t n;
	int j;

	CHECK(!self_init(&e));
	CHECK(!sigaction(SIGUSR2, &sa, &old));
	ra_test = (uint64_t)__builtin_return_address(0);
	sink = raiser(1);
	sigaction(SIGUSR2, &old, NULL);
	n = walk(&e, &e.proc, cap.len, pcs, WALK_MAX, &truncated);
	CHECK(!truncated);
	CHECK_EQ(pcs[0], cap.pc);
	CHECK_EQ(pcs[1], ra_leaf);
	/* The handler returns into the restorer, named one byte on like an interrupted pc. */
	CHECK(n > 3 && in_libc(pcs[2]));
	CHECK(!memcmp((const void *)(pcs[2] - 1), restorer, sizeof(restorer)));
	/* Where the signal struck (in raise, in glibc), then raise's callers. */
	CHECK(in_libc(pcs[3]));
	j = index_of(pcs, n, ra_raiser);
	CHECK(j >= 5 && (uint32_t)j + 2 < n);
	CHECK(pcs[j - 1] > (uint64_t)raiser && pcs[j - 1] < (uint64_t)raiser + 256);
	CHECK_EQ(pcs[j + 1], ra_test);
	CHECK_EQ(pcs[j + 2], ra_main);
	self_fini(&e);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

TEST(walk_copy_garbage_never_crashes)
{
	uint64_t pcs[WALK_MAX], real[WALK_MAX], words[512];
	struct unwind_proc proc;
	struct self e;
	bool truncated;
	uint32_t nreal;

	CHECK(!self_init(&e));
	sink = chain_a(1);
	nreal = walk(&e, &e.proc, cap.len, real, WALK_MAX, &truncated);
	CHECK(nreal >= 9);
	for (int it = 0; it < 4000; it++) {
		uint64_t base = 0x7ffd00000000ULL + (rnd() & 0xffff0), pc, bp;
		unsigned char *copy;
		size_t len;
		uint32_t n;

		/* Words that look like return addresses, frame pointers into the copy, or noise. */
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			switch (rnd() % 4) {
			case 0:
				words[i] = real[rnd() % nreal] + (rnd() % 3) - 1;
				break;
			case 1:
				words[i] = base + (rnd() % sizeof(words));
				break;
			default:
				words[i] = rnd();
				break;
			}
		}
		pc = rnd() % 2 ? real[rnd() % nreal] : rnd();
		bp = rnd() % 2 ? base + (rnd() % sizeof(words)) : rnd();
		proc = e.proc;
		if (it % 4 == 3) {
			/* A table as torn as it gets: any slot, any range, any count. */
			for (uint32_t i = 0; i < 8 && i < proc.nr; i++)
				proc.maps[rnd() % proc.nr].file = (uint32_t)rnd();
			if (it % 8 == 7)
				proc.nr = (uint32_t)rnd();
		}
		/* A buffer of exactly the copy's length: a read past it is one valgrind sees. */
		len = rnd() % sizeof(words);
		copy = malloc(len ? len : 1);
		CHECK(copy);
		memcpy(copy, words, len);
		n = unwinder__walk_copy(e.u, &proc, pc, base, bp, copy, len, pcs, WALK_MAX,
					&truncated);
		free(copy);
		CHECK(n <= WALK_MAX);
		CHECK(n >= 1 || !pc);
		CHECK(n < WALK_MAX || truncated);
	}
	/* The real copy with a few bytes flipped. */
	for (int it = 0; it < 2000; it++) {
		size_t len = cap.len < 8192 ? cap.len : 8192;
		unsigned char saved[8];
		size_t at = rnd() % (len - 8);
		uint32_t n;

		memcpy(saved, cap.copy + at, 8);
		for (int b = 0; b < 8; b++)
			cap.copy[at + b] ^= (unsigned char)rnd();
		n = walk(&e, &e.proc, cap.len, pcs, WALK_MAX, &truncated);
		memcpy(cap.copy + at, saved, 8);
		CHECK(n >= 1 && n <= WALK_MAX);
	}
	self_fini(&e);
}

/* Evicts and rebuilds two tables in one row range, over and over. */
struct churn {
	struct unwinder *u;
	struct dso *libc, *cxx;
	volatile int stop;
	volatile uint32_t cycles;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	struct proc_map libc = { 0x10000, 0x20000, 0, c->libc, 0, 0 };
	struct proc_map cxx = { 0x10000, 0x20000, 0, c->cxx, 0, 0 };

	while (!c->stop) {
		unwinder__update(c->u, 100, NULL, 0);
		unwinder__update(c->u, 200, &cxx, 1);
		unwinder__wait_idle(c->u);
		unwinder__update(c->u, 200, NULL, 0);
		unwinder__update(c->u, 100, &libc, 1);
		unwinder__wait_idle(c->u);
		c->cycles++;
	}
	return NULL;
}

TEST(walk_copy_while_tables_change)
{
	struct churn c = { .libc = elf_dso(LIBC), .cxx = elf_dso(LIBSTDCXX) };
	struct unwinder_stats s;
	uint32_t nc = rows_of(LIBC), nx = rows_of(LIBSTDCXX), walks = 0;
	uint64_t pcs[WALK_MAX];
	struct timespec t0, t;
	struct self e;
	pthread_t th;
	bool truncated;

	if (!c.cxx)
		SKIP("no %s", LIBSTDCXX);
	CHECK(c.libc && nc && nx);
	CHECK(!self_init(&e));
	sink = chain_a(1);
	/* Room for one of the two: each evicts the other, its rows written where the other's
	 * were, while this thread walks them. This process's mapping table names file slots of
	 * another unwinder: lookups land in those rows as they change. */
	c.u = new_unwinder_share((uint64_t)(nc > nx ? nc : nx) * UNWINDER_ROW_BYTES, 1);
	CHECK(c.u);
	CHECK(!pthread_create(&th, NULL, churn_main, &c));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint32_t n = unwinder__walk_copy(c.u, &e.proc, cap.pc, cap.sp, cap.bp, cap.copy,
						 cap.len, pcs, WALK_MAX, &truncated);

		if (n < 1 || n > WALK_MAX)
			FAILF("walk %u: %u frames", walks, n);
		walks++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (c.cycles < 20 && t.tv_sec - t0.tv_sec < 20);
	c.stop = 1;
	pthread_join(th, NULL);
	unwinder__stats(c.u, &s);
	/* Each cycle evicted both tables and rebuilt them. */
	CHECK(c.cycles >= 3);
	CHECK(s.evictions >= 2 * c.cycles - 1);
	CHECK(walks > 1000);
	unwinder__free(c.u);
	dso__put(c.libc);
	dso__put(c.cxx);
	self_fini(&e);
}

int main(void)
{
	ra_main = (uint64_t)__builtin_return_address(0);
	RUN(shared_table_matches_cfi);
	RUN(extents_cap_drops_room_past_it);
	RUN(idle_table_reused);
	RUN(memory_limit_evicts_lru);
	RUN(big_table_never_blinds_the_rest);
	RUN(table_larger_than_budget);
	RUN(anonymous_code_and_many_mappings);
	RUN(walk_copy_through_qsort);
	RUN(walk_copy_frame_pointers_without_table);
	RUN(walk_copy_through_signal_frame);
	RUN(walk_copy_garbage_never_crashes);
	RUN(walk_copy_while_tables_change);
	return test_summary();
}
