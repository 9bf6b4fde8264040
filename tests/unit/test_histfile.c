/* DEPS: src/history/histfile.c src/lib/array.c src/lib/keyindex.c src/lib/strtab.c src/lib/buf.c src/lib/timeparse.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The history's file format: records written one after another read back with their
 * dictionary, stacks and values; every cut and every flipped byte refused, never misread; the
 * points in time query parameters take.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "history/histfile.h"
#include "lib/buf.h"
#include "lib/timeparse.h"
#include "testlib.h"

/* Two records of one file: the second reuses the first's dictionary and adds to it. */
static void write_two(struct buf *out, size_t *first_len)
{
	struct histfile_writer *w = histfile_writer__new();
	struct histfile_summary sum[1] = { { .pid = 7, .exe = "spike", .values = { 5 } } };
	struct histfile_hdr h = { .type = "cpu", .start_ns = 1000, .end_ns = 2000, .period = 3,
				  .nr_values = 2, .nr_summary = 1 };
	struct histfile_loc main_loc = { histfile_writer__str(w, "/bin/spike"),
					 histfile_writer__str(w, "main"), histfile_writer__str(w, "s.c"),
					 12 };
	struct histfile_loc spike_loc = main_loc;
	struct histfile_row row = { .pid = 7, .tid = 8, .values = { 5, 50 } };
	uint32_t root;

	spike_loc.function = (uint32_t)histfile_writer__str(w, "spike_fn");
	root = (uint32_t)histfile_writer__node(w, 0, (uint32_t)histfile_writer__loc(w, &main_loc));
	row.node = (uint32_t)histfile_writer__node(
		w, root, (uint32_t)histfile_writer__loc(w, &spike_loc));
	row.comm = (uint32_t)histfile_writer__str(w, "spike");
	CHECK_EQ(histfile_writer__record(w, &h, sum, &row, 1, out), 0);
	histfile_writer__commit(w);
	*first_len = out->len;
	/* Same stack, one new frame under it. */
	spike_loc.function = (uint32_t)histfile_writer__str(w, "leaf");
	row.node = (uint32_t)histfile_writer__node(
		w, row.node, (uint32_t)histfile_writer__loc(w, &spike_loc));
	row.values[0] = 9;
	h.start_ns = 2000;
	h.end_ns = 3000;
	CHECK_EQ(histfile_writer__record(w, &h, sum, &row, 1, out), 0);
	histfile_writer__commit(w);
	histfile_writer__free(w);
}

/* Reads every record of p[0, n): the count read whole, -errno of the one that stopped it. */
static int read_all(const uint8_t *p, size_t n, int *stop, uint64_t *last_value, char *leaf)
{
	struct histfile_reader *r = histfile_reader__new();
	size_t off = 0;
	int count = 0;

	*stop = 0;
	while (off < n) {
		struct histfile_hdr h;
		struct histfile_summary s[HISTFILE_SUMMARY_MAX];
		const struct histfile_row *rows;
		struct histfile_node nd;
		struct histfile_loc l;
		size_t nr;

		*stop = histfile__parse_hdr(p + off, n - off, &h, s);
		if (!*stop && off + histfile__record_size(&h) > n)
			*stop = -ENODATA;
		if (!*stop)
			*stop = histfile_reader__body(r, &h, p + off + histfile__body_offset(&h),
						      true);
		if (*stop)
			break;
		rows = histfile_reader__rows(r, &nr);
		if (nr == 1 && rows[0].node && histfile_reader__node(r, rows[0].node - 1, &nd) &&
		    histfile_reader__loc(r, nd.loc, &l)) {
			*last_value = rows[0].values[0];
			snprintf(leaf, 32, "%s", histfile_reader__str(r, l.function));
		}
		off += histfile__record_size(&h);
		count++;
	}
	histfile_reader__free(r);
	return count;
}

TEST(records_round_trip)
{
	struct buf b = { 0 };
	size_t first;
	uint64_t v = 0;
	char leaf[32] = "";
	int stop, n;

	write_two(&b, &first);
	n = read_all((uint8_t *)b.data, b.len, &stop, &v, leaf);
	CHECK_EQ(n, 2);
	CHECK_EQ(stop, 0);
	CHECK_EQ(v, 9);
	CHECK_STR(leaf, "leaf");
	buf__free(&b);
}

TEST(a_cut_or_flipped_byte_ends_the_file_there)
{
	struct buf b = { 0 };
	size_t first;
	uint64_t v;
	char leaf[32];
	int stop;

	write_two(&b, &first);
	/* Every cut inside the second record: the first still reads, the second never. */
	for (size_t cut = first + 1; cut < b.len; cut++) {
		if (read_all((uint8_t *)b.data, cut, &stop, &v, leaf) != 1 || !stop)
			FAILF("cut at %zu of %zu: read on", cut, b.len);
	}
	/* Every byte of the second record flipped: refused, never read as something else. */
	for (size_t i = first; i < b.len; i++) {
		b.data[i] ^= 0x5a;
		if (read_all((uint8_t *)b.data, b.len, &stop, &v, leaf) != 1 || !stop)
			FAILF("byte %zu flipped: read on", i);
		b.data[i] ^= 0x5a;
	}
	buf__free(&b);
}

TEST(points_in_time)
{
	uint64_t ns;

	CHECK_EQ(time__parse("1764120720", &ns), 0);
	CHECK_EQ(ns, 1764120720000000000ULL);
	CHECK_EQ(time__parse("1764120720.25", &ns), 0);
	CHECK_EQ(ns, 1764120720250000000ULL);
	CHECK_EQ(time__parse("2026-11-26T03:12:00Z", &ns), 0);
	CHECK_EQ(ns, 1795662720000000000ULL);
	CHECK_EQ(time__parse("2026-11-26T04:12:00.5+01:00", &ns), 0);
	CHECK_EQ(ns, 1795662720500000000ULL);
	const char *bad[] = { "", "x", "-5", "1e9", "2026-02-30T00:00:00Z", "2026-11-26T03:12:00",
			      "2026-11-26T25:00:00Z", "99999999999999999999", "12:00", "1.",
			      "2026-11-26T03:12:00+1:00" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (time__parse(bad[i], &ns) != -EINVAL)
			FAILF("\"%s\" accepted", bad[i]);
}

int main(void)
{
	RUN(records_round_trip);
	RUN(a_cut_or_flipped_byte_ends_the_file_there);
	RUN(points_in_time);
	return test_summary();
}
