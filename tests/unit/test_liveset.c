/* DEPS: src/store/liveset.c src/store/store.c src/lib/strtab.c src/lib/log.c tests/unit/fake_symbolizer.c src/lib/ufile.c src/lib/procfs.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Live sets: allocations held by (pid, space, pointer), replaced, freed, dropped with their
 * process, bounded, and aggregated into heap rows by (pid, tid, labels, stack).
 */
#include <errno.h>
#include <string.h>

#include "store/liveset.h"
#include "store/store.h"
#include "fake_symbolizer.h"
#include "testlib.h"

static struct live_alloc alloc(uint32_t pid, uint32_t tid, uint8_t space, uint64_t ptr,
			       uint64_t bytes, const struct frame *f, uint32_t n)
{
	return (struct live_alloc){ .pid = pid, .tid = tid, .ptr = ptr, .space = space,
				    .objects = 1, .bytes = bytes, .comm = "t", .exe = "x",
				    .frames = f, .nr_frames = n };
}

TEST(liveset_add_remove_replace)
{
	struct dso *dso = fake_dso__new(DSO_ELF, "/bin/x", "");
	struct frame f[2] = { { dso, 1 }, { dso, 2 } };
	struct liveset *ls = liveset__new(0);
	struct live_alloc a = alloc(7, 7, 0, 0x1000, 100, f, 2);
	uint64_t n, bytes;

	CHECK_EQ(liveset__add(ls, &a), 0);
	/* The same pointer in another space is another allocation. */
	a.space = 1;
	CHECK_EQ(liveset__add(ls, &a), 0);
	/* Its free was lost: the same key again replaces it. */
	a.bytes = 50;
	CHECK_EQ(liveset__add(ls, &a), 0);
	liveset__count(ls, &n, &bytes);
	CHECK_EQ(n, 2);
	CHECK_EQ(bytes, 150);
	CHECK_EQ(liveset__remove(ls, 7, 0, 0x1000), 0);
	CHECK_EQ(liveset__remove(ls, 7, 0, 0x1000), -ENOENT);
	CHECK_EQ(liveset__remove(ls, 8, 1, 0x1000), -ENOENT);
	liveset__count(ls, &n, &bytes);
	CHECK_EQ(n, 1);
	CHECK_EQ(bytes, 50);
	liveset__free(ls);
	dso__put(dso);
}

TEST(liveset_bounded_and_dropped_by_pid)
{
	struct liveset *ls = liveset__new(1000);
	uint64_t n, bytes;

	for (uint64_t i = 0; i < 1000; i++) {
		struct live_alloc a = alloc(1 + (uint32_t)(i % 2), 1, 0, 0x1000 + i * 16, 1, NULL, 0);

		CHECK_EQ(liveset__add(ls, &a), 0);
	}
	struct live_alloc over = alloc(3, 3, 0, 0x1, 1, NULL, 0);
	CHECK_EQ(liveset__add(ls, &over), -ENOSPC);
	liveset__drop_pid(ls, 1);
	liveset__count(ls, &n, &bytes);
	CHECK_EQ(n, 500);
	CHECK_EQ(liveset__add(ls, &over), 0);
	liveset__free(ls);
}

TEST(liveset_rows_aggregate_by_stack_and_labels)
{
	struct dso *dso = fake_dso__new(DSO_ELF, "/bin/x", "");
	struct frame f1[1] = { { dso, 1 } }, f2[1] = { { dso, 2 } };
	struct liveset *ls = liveset__new(0);
	struct store_filter only7 = { .pids = (uint32_t[]){ 7 }, .nr_pids = 1 };
	struct store_row *rows;
	size_t nr;
	struct live_alloc a;

	a = alloc(7, 7, 0, 0x10, 100, f1, 1);
	CHECK_EQ(liveset__add(ls, &a), 0);
	a = alloc(7, 7, 0, 0x20, 200, f1, 1);
	CHECK_EQ(liveset__add(ls, &a), 0);
	a = alloc(7, 7, 0, 0x30, 400, f2, 1);
	CHECK_EQ(liveset__add(ls, &a), 0);
	a = alloc(7, 7, 0, 0x40, 800, f1, 1);
	a.gpu_api = 2;
	a.gpu = 1;
	CHECK_EQ(liveset__add(ls, &a), 0);
	a = alloc(9, 9, 0, 0x10, 1600, f1, 1);
	CHECK_EQ(liveset__add(ls, &a), 0);
	CHECK_EQ(liveset__rows(ls, &only7, &rows, &nr), 0);
	CHECK_EQ(nr, 3);
	uint64_t same = 0, other = 0, labelled = 0;
	for (size_t i = 0; i < nr; i++) {
		CHECK_EQ(rows[i].pid, 7);
		CHECK(!strcmp(rows[i].exe, "x") && !strcmp(rows[i].comm, "t"));
		if (rows[i].gpu_api == 2) {
			CHECK_EQ(rows[i].gpu, 1);
			labelled = rows[i].values[3];
		} else if (rows[i].frames[0].addr == 1) {
			CHECK_EQ(rows[i].values[2], 2);
			same = rows[i].values[3];
		} else {
			other = rows[i].values[3];
		}
	}
	CHECK_EQ(same, 300);
	CHECK_EQ(other, 400);
	CHECK_EQ(labelled, 800);
	store_rows__free(rows, nr);
	liveset__free(ls);
	/* The rows and the set held their own references, and gave them back. */
	dso__put(dso);
	CHECK_EQ(fake_dso__live(), 0);
}

int main(void)
{
	RUN(liveset_add_remove_replace);
	RUN(liveset_bounded_and_dropped_by_pid);
	RUN(liveset_rows_aggregate_by_stack_and_labels);
	return test_summary();
}
