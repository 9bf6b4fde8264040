// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/maplat_tool: fills the maps of maplat.bpf.c with one random chain, starts a workload
 * that keeps the caches and TLB busy (random cache lines in a big buffer), samples on cpu-clock at
 * 99 Hz (on the workload's thread, or on every CPU) for a while and prints, per map layout, the
 * median and mean ns per cold and per warm lookup (the empty chain's time subtracted).
 *   maplat_tool thread|cpus SECONDS WORKLOAD_MIB
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "maplat.h"
#include "maplat.skel.h"

static const char *const names[MAPLAT_NVARIANTS] = {
    [MAPLAT_EMPTY] = "empty chain (clock + arithmetic)",
    [MAPLAT_ARRAY] = "array 16 MiB",
    [MAPLAT_MMAP] = "array 16 MiB, BPF_F_MMAPABLE",
    [MAPLAT_AOM16K] = "array of 1024 arrays of 16 KiB",
    [MAPLAT_AOM32K] = "array of 512 arrays of 32 KiB",
    [MAPLAT_HOT16K] = "1024 x 16 KiB, outer array hot",
    [MAPLAT_HOT32K] = "512 x 32 KiB, outer array hot",
    [MAPLAT_HASH] = "hash, 1 Mi entries",
};

static struct maplat_row rows[MAPLAT_ROWS];
static uint32_t keys[MAPLAT_ROWS];

static int die(const char *what, int err)
{
	fprintf(stderr, "maplat_tool: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void fill_batch(int fd, uint32_t first, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t count = n;

	if (bpf_map_update_batch(fd, keys, rows + first, &count, &opts))
		die("bpf_map_update_batch", errno);
}

static void fill_aom(int outer, uint32_t log2)
{
	uint32_t per = 1u << log2;

	for (uint32_t o = 0; o < MAPLAT_ROWS / per; o++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, sizeof(struct maplat_row), per,
					NULL);

		if (fd < 0)
			die("bpf_map_create", errno);
		fill_batch(fd, o * per, per);
		if (bpf_map_update_elem(outer, &o, &fd, BPF_ANY))
			die("outer update", errno);
		close(fd);
	}
}

/* Touches a random cache line of a big buffer forever: the sampled context's caches and TLB. */
static void workload(size_t mib)
{
	size_t n = mib << 20;
	volatile unsigned char *buf = malloc(n);
	uint64_t x = 88172645463325252ull;

	if (!buf)
		_exit(1);
	memset((void *)buf, 1, n);
	for (;;) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[(x % n) & ~63ul]++;
	}
}

/* Prints /proc/vmallocinfo lines that are new since the snapshot, by size and caller. */
static char *vmalloc_snapshot(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char line[512];

	while (f && fgets(line, sizeof(line), f))
		fputs(line, m);
	if (f)
		fclose(f);
	fclose(m);
	return buf;
}

static void vmalloc_new(const char *before)
{
	char *after = vmalloc_snapshot(), *save = NULL;
	char what[512][128];
	int count[512], nwhat = 0;

	for (char *l = strtok_r(after, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char addr[64], caller[96];
		unsigned long size;

		if (sscanf(l, "%63s %lu %95s", addr, &size, caller) != 3 || strstr(before, addr) ||
		    !strncmp(caller, "unpurged", 8))
			continue;
		char key[128];
		char *plus = strchr(caller, '+');

		if (plus)
			*plus = 0;
		snprintf(key, sizeof(key), "%lu B by %s", size, caller);
		int i;

		for (i = 0; i < nwhat && strcmp(what[i], key); i++)
			;
		if (i == nwhat && nwhat < 512)
			strcpy(what[nwhat], key), count[nwhat++] = 0;
		if (i < 512)
			count[i]++;
	}
	printf("new vmalloc areas since before the maps were made:\n");
	for (int i = 0; i < nwhat; i++)
		printf("  %5d x %s\n", count[i], what[i]);
	free(after);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double median(uint32_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	return n ? v[n / 2] : 0;
}

static double mean(const uint32_t *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "thread") && strcmp(argv[1], "cpus"))) {
		fprintf(stderr, "usage: maplat_tool thread|cpus SECONDS WORKLOAD_MIB\n");
		return 2;
	}
	int per_thread = !strcmp(argv[1], "thread");
	int seconds = atoi(argv[2]);
	size_t mib = strtoul(argv[3], NULL, 10);
	uint64_t x = 0x2545f4914f6cdd1dull;
	char *before = vmalloc_snapshot();
	struct maplat_bpf *skel;
	int err;

	for (uint32_t i = 0; i < MAPLAT_ROWS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		keys[i] = i;
		rows[i].next = (uint32_t)x & (MAPLAT_ROWS - 1);
	}
	skel = maplat_bpf__open_and_load();
	if (!skel)
		die("open_and_load", errno);
	fill_batch(bpf_map__fd(skel->maps.rows_array), 0, MAPLAT_ROWS);
	fill_batch(bpf_map__fd(skel->maps.rows_hash), 0, MAPLAT_ROWS);
	void *mm = mmap(NULL, sizeof(rows), PROT_READ | PROT_WRITE, MAP_SHARED,
			bpf_map__fd(skel->maps.rows_mmap), 0);
	if (mm == MAP_FAILED)
		die("mmap", errno);
	memcpy(mm, rows, sizeof(rows));
	munmap(mm, sizeof(rows));
	fill_aom(bpf_map__fd(skel->maps.rows_aom16k), MAPLAT_SMALL_LOG2);
	fill_aom(bpf_map__fd(skel->maps.rows_aom32k), MAPLAT_BIG_LOG2);
	fill_aom(bpf_map__fd(skel->maps.rows_hot16k), MAPLAT_SMALL_LOG2);
	fill_aom(bpf_map__fd(skel->maps.rows_hot32k), MAPLAT_BIG_LOG2);
	vmalloc_new(before);
	free(before);

	pid_t child = fork();
	if (child == 0)
		workload(mib);
	int ncpu = per_thread ? 1 : libbpf_num_possible_cpus();
	struct bpf_link *links[64] = {};
	for (int c = 0; c < ncpu && c < 64; c++) {
		struct perf_event_attr attr = {
		    .type = PERF_TYPE_SOFTWARE,
		    .config = PERF_COUNT_SW_CPU_CLOCK,
		    .size = sizeof(attr),
		    .freq = 1,
		    .sample_freq = 99,
		};
		int pfd = syscall(__NR_perf_event_open, &attr, per_thread ? child : -1,
				  per_thread ? -1 : c, -1, PERF_FLAG_FD_CLOEXEC);

		if (pfd < 0)
			die("perf_event_open", errno);
		links[c] = bpf_program__attach_perf_event(skel->progs.maplat_sample, pfd);
		err = -errno;
		if (!links[c])
			die("attach", err);
	}
	sleep(seconds);
	for (int c = 0; c < ncpu && c < 64; c++)
		bpf_link__destroy(links[c]);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	static uint32_t cold[MAPLAT_NVARIANTS][MAPLAT_RECORDS],
	    warm[MAPLAT_NVARIANTS][MAPLAT_RECORDS];
	size_t n = 0;
	int rfd = bpf_map__fd(skel->maps.records);
	for (uint32_t c = 0; c < MAPLAT_CPUS; c++) {
		for (uint32_t i = 0; i < skel->bss->nrecords[c]; i++) {
			uint32_t key = c * MAPLAT_PER_CPU + i;
			struct maplat_record r;

			if (bpf_map_lookup_elem(rfd, &key, &r))
				die("records", errno);
			for (int v = 0; v < MAPLAT_NVARIANTS; v++)
				cold[v][n] = r.cold[v], warm[v][n] = r.warm[v];
			n++;
		}
	}
	printf("mode %s, %d s, workload %zu MiB, %zu samples, %d dependent lookups per chain\n",
	       argv[1], seconds, mib, n, MAPLAT_LOOKUPS);
	double e_cold = median(cold[MAPLAT_EMPTY], n), e_warm = median(warm[MAPLAT_EMPTY], n);
	double em_cold = mean(cold[MAPLAT_EMPTY], n), em_warm = mean(warm[MAPLAT_EMPTY], n);
	printf("empty chain: median %.0f ns cold, %.0f ns warm (subtracted below)\n", e_cold,
	       e_warm);
	printf("%-34s %12s %12s %12s %12s\n", "ns per lookup", "cold median", "cold mean",
	       "warm median", "warm mean");
	for (int v = 1; v < MAPLAT_NVARIANTS; v++) {
		double cm = mean(cold[v], n), wm = mean(warm[v], n);
		double cmed = median(cold[v], n), wmed = median(warm[v], n);

		printf("%-34s %12.1f %12.1f %12.1f %12.1f\n", names[v],
		       (cmed - e_cold) / MAPLAT_LOOKUPS, (cm - em_cold) / MAPLAT_LOOKUPS,
		       (wmed - e_warm) / MAPLAT_LOOKUPS, (wm - em_warm) / MAPLAT_LOOKUPS);
	}
	maplat_bpf__destroy(skel);
	return 0;
}
