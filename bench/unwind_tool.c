// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unwind-table build cost of ELF files:
 *   unwind_tool [--dump] FILE...
 * prints per file its path, row count, bytes (rows x sizeof(struct unwind_row)), the best of 5
 * build times in milliseconds and the file flags, then a total line. --dump also prints every
 * row (file offset, CFA rule, rbp rule) for eyeballing against readelf -wF.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unwind/cfi.h"

#define REPEAT 5

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *const cfa_names[] = {
	[UNWIND_CFA_UNDEFINED] = "undefined", [UNWIND_CFA_RSP] = "rsp",
	[UNWIND_CFA_RBP] = "rbp",	      [UNWIND_CFA_PLT] = "plt",
	[UNWIND_CFA_SIGNAL] = "signal",	      [UNWIND_CFA_INVALID] = "invalid",
	[UNWIND_CFA_NONE] = "none",	      [UNWIND_CFA_RBP_SWITCH] = "rbp-switch",
};

static void dump(const struct cfi_table *t)
{
	for (uint32_t i = 0; i < t->nr; i++) {
		const struct unwind_rule rule = unwind_row__rule(&t->rows[i]), *r = &rule;

		printf("  %08x %s%+d", t->rows[i].pc,
		       r->cfa_type < sizeof(cfa_names) / sizeof(cfa_names[0]) ? cfa_names[r->cfa_type]
									       : "?",
		       r->cfa_off);
		if (r->rbp_type == UNWIND_RBP_OFFSET)
			printf(" rbp=c%+d", r->rbp_off);
		else if (r->rbp_type == UNWIND_RBP_INVALID)
			printf(" rbp=invalid");
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	unsigned long long total_rows = 0, total_bytes = 0;
	double total_ms = 0;
	int i = 1, ret = 0;
	int do_dump = 0;

	if (argc > 1 && !strcmp(argv[1], "--dump")) {
		do_dump = 1;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [--dump] FILE...\n", argv[0]);
		return 2;
	}
	printf("%-60s %8s %10s %8s %5s\n", "file", "rows", "bytes", "ms", "flags");
	for (; i < argc; i++) {
		struct cfi_table t = {};
		double best = -1;
		int fd, err = 0;

		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			ret = 1;
			continue;
		}
		for (int rep = 0; rep < REPEAT && !err; rep++) {
			double t0;

			cfi_table__release(&t);
			t0 = now_ms();
			err = cfi__build(fd, &t);
			t0 = now_ms() - t0;
			if (best < 0 || t0 < best)
				best = t0;
		}
		close(fd);
		if (err) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(-err));
			ret = 1;
			continue;
		}
		printf("%-60s %8u %10zu %8.3f %5u\n", argv[i], t.nr,
		       (size_t)t.nr * sizeof(struct unwind_row), best, t.flags);
		if (do_dump)
			dump(&t);
		total_rows += t.nr;
		total_bytes += (unsigned long long)t.nr * sizeof(struct unwind_row);
		total_ms += best;
		cfi_table__release(&t);
	}
	printf("%-60s %8llu %10llu %8.3f\n", "total", total_rows, total_bytes, total_ms);
	return ret;
}
