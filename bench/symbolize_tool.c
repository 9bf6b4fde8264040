// SPDX-License-Identifier: GPL-2.0-only
/*
 * addr2line-compatible driver for autoprof's symbolizer (objsym), for bench/symbolize.sh:
 *   symbolize_tool [--repeat N] [--quiet] [--times] [-a] BINARY [DEBUGFILE] < addresses
 * reads ELF virtual addresses of BINARY in hex (one a line, 0x optional), turns each into a file
 * offset through BINARY's PT_LOAD segments (what the profiler sees in /proc/PID/maps), looks it up
 * with objsym__lookup() and prints what `addr2line -f -i -C -e BINARY` prints: per inline level,
 * innermost first, a function line and a FILE:LINE line ("??" and "??:0" when nothing is known).
 * --repeat N looks the whole list up N times and prints only the last pass; --quiet prints
 * nothing; -a (--addresses) prints each address first, as addr2line -a; --times writes the load time and each pass's time (seconds) to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/objsym.h"

struct seg {
	uint64_t vaddr, filesz, offset;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* BINARY's PT_LOAD segments, the inverse of elf_file__offset_to_vaddr(). */
static int load_segs(int fd, struct seg **out, size_t *nr)
{
	size_t phnum, n = 0;
	struct seg *v;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getphdrnum(elf, &phnum)) {
		elf_end(elf);
		return -1;
	}
	v = calloc(phnum ? phnum : 1, sizeof(*v));
	if (!v) {
		elf_end(elf);
		return -1;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			v[n++] = (struct seg){ ph.p_vaddr, ph.p_filesz, ph.p_offset };
	}
	elf_end(elf);
	*out = v;
	*nr = n;
	return 0;
}

static int vaddr_to_offset(const struct seg *segs, size_t nr, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < nr; i++) {
		if (vaddr >= segs[i].vaddr && vaddr - segs[i].vaddr < segs[i].filesz) {
			*off = vaddr - segs[i].vaddr + segs[i].offset;
			return 0;
		}
	}
	return -ENOENT;
}

static void print_frame(FILE *f, const struct objsym_frame *fr)
{
	if (!fr || !fr->nr) {
		fputs("??\n??:0\n", f);
		return;
	}
	for (uint32_t i = 0; i < fr->nr; i++) {
		const struct objsym_line *l = &fr->lines[i];

		fprintf(f, "%s\n%s:", l->function ? l->function : "??", l->file ? l->file : "??");
		if (l->line)
			fprintf(f, "%u\n", l->line);
		else
			fputs("?\n", f);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: symbolize_tool [--repeat N] [--quiet] [--times] [-a] BINARY [DEBUGFILE] < addresses\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bin = NULL, *dbg = NULL;
	int repeat = 1, quiet = 0, times = 0, show_addr = 0, fd, dfd = -1, err;
	uint64_t *addrs = NULL;
	size_t nr = 0, cap = 0, nsegs;
	struct objsym *os;
	struct seg *segs;
	char buf[256];
	double t0, t1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!strcmp(argv[i], "--times"))
			times = 1;
		else if (!strcmp(argv[i], "-a") || !strcmp(argv[i], "--addresses"))
			show_addr = 1;
		else if (argv[i][0] == '-')
			usage();
		else if (!bin)
			bin = argv[i];
		else if (!dbg)
			dbg = argv[i];
		else
			usage();
	}
	if (!bin || repeat < 1)
		usage();

	while (fgets(buf, sizeof(buf), stdin)) {
		char *end;
		uint64_t a = strtoull(buf, &end, 16);

		if (end == buf)
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 4096;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			if (!addrs)
				return 1;
		}
		addrs[nr++] = a;
	}

	t0 = now();
	fd = open(bin, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(bin);
		return 1;
	}
	if (dbg) {
		dfd = open(dbg, O_RDONLY | O_CLOEXEC);
		if (dfd < 0) {
			perror(dbg);
			return 1;
		}
	}
	if (load_segs(fd, &segs, &nsegs)) {
		fprintf(stderr, "%s: cannot read program headers\n", bin);
		return 1;
	}
	err = objsym__load(fd, dfd, &os);
	if (err) {
		fprintf(stderr, "%s: objsym__load: %s\n", bin, strerror(-err));
		return 1;
	}
	t1 = now();
	if (times)
		fprintf(stderr, "load %.6f sources 0x%x\n", t1 - t0, objsym__sources(os));

	for (int pass = 0; pass < repeat; pass++) {
		int print = !quiet && pass == repeat - 1;

		t0 = now();
		for (size_t i = 0; i < nr; i++) {
			const struct objsym_frame *fr = NULL;
			uint64_t off;

			if (vaddr_to_offset(segs, nsegs, addrs[i], &off) || objsym__lookup(os, off, &fr))
				fr = NULL;
			if (print && show_addr)
				printf("0x%016" PRIx64 "\n", addrs[i]);
			if (print)
				print_frame(stdout, fr);
		}
		if (print)
			fflush(stdout);
		t1 = now();
		if (times)
			fprintf(stderr, "pass %d %.6f\n", pass, t1 - t0);
	}
	if (times)
		fprintf(stderr, "bytes %zu\n", objsym__bytes(os));
	objsym__free(os);
	free(segs);
	free(addrs);
	close(fd);
	if (dfd >= 0)
		close(dfd);
	return 0;
}
