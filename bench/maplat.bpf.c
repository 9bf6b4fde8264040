// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/maplat: at each cpu-clock sample, the time of a chain of dependent lookups (each index
 * read from the row before) in maps laid out as the unwinder's table could be: one big array
 * (vmalloc'd, 4 KiB pages), the same mmapable, arrays of small arrays (kmalloc'd from the direct
 * map when an inner array fits in 32 KiB), a hash. The chain runs once cold, once again warm.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "maplat.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAPLAT_ROWS);
	__type(key, __u32);
	__type(value, struct maplat_row);
} rows_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAPLAT_ROWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct maplat_row);
} rows_mmap SEC(".maps");

struct inner16k {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << MAPLAT_SMALL_LOG2);
	__type(key, __u32);
	__type(value, struct maplat_row);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAPLAT_ROWS >> MAPLAT_SMALL_LOG2);
	__type(key, __u32);
	__array(values, struct inner16k);
} rows_aom16k SEC(".maps");

struct inner32k {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << MAPLAT_BIG_LOG2);
	__type(key, __u32);
	__type(value, struct maplat_row);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAPLAT_ROWS >> MAPLAT_BIG_LOG2);
	__type(key, __u32);
	__array(values, struct inner32k);
} rows_aom32k SEC(".maps");

/* The same layouts again, for the variants that read the whole outer array before the chain. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAPLAT_ROWS >> MAPLAT_SMALL_LOG2);
	__type(key, __u32);
	__array(values, struct inner16k);
} rows_hot16k SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAPLAT_ROWS >> MAPLAT_BIG_LOG2);
	__type(key, __u32);
	__array(values, struct inner32k);
} rows_hot32k SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAPLAT_ROWS);
	__type(key, __u32);
	__type(value, struct maplat_row);
} rows_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAPLAT_RECORDS);
	__type(key, __u32);
	__type(value, struct maplat_record);
} records SEC(".maps");

/* Records per CPU slot: each CPU fills its own 1/MAPLAT_CPUS of records, without atomics. */
__u32 nrecords[MAPLAT_CPUS];
__u32 sink;

#define MASK (MAPLAT_ROWS - 1)

static __always_inline __u32 chain_empty(__u32 idx)
{
#pragma clang loop unroll(disable)
	for (int i = 0; i < MAPLAT_LOOKUPS; i++)
		idx = ((idx ^ (idx >> 7)) * 0x9e3779b1u) & MASK;
	return idx;
}

/* Not unrolled: the same few instructions for every variant, hot in the i-cache when warm. */
static __always_inline __u32 chain_flat(void *map, __u32 idx)
{
#pragma clang loop unroll(disable)
	for (int i = 0; i < MAPLAT_LOOKUPS; i++) {
		struct maplat_row *r = bpf_map_lookup_elem(map, &idx);

		if (!r)
			break;
		idx = r->next & MASK;
	}
	return idx;
}

static __always_inline __u32 chain_aom(void *outer, __u32 idx, __u32 log2)
{
#pragma clang loop unroll(disable)
	for (int i = 0; i < MAPLAT_LOOKUPS; i++) {
		__u32 o = idx >> log2, k = idx & ((1u << log2) - 1);
		struct maplat_row *r;
		void *inner;

		inner = bpf_map_lookup_elem(outer, &o);
		if (!inner)
			break;
		r = bpf_map_lookup_elem(inner, &k);
		if (!r)
			break;
		idx = r->next & MASK;
	}
	return idx;
}

/* Reads one slot per cache line of an outer array, so that only the rows are cold. */
static __always_inline __u32 heat_outer(void *outer, __u32 slots)
{
	__u32 acc = 0;

	for (__u32 o = 0; o < slots; o += 8) {
		__u32 k = o;

		if (bpf_map_lookup_elem(outer, &k))
			acc++;
	}
	return acc;
}

/* Times one chain cold, then again warm; constant record slots keep the verifier's bounds. */
#define TIMED(v, chain)                                                                            \
	do {                                                                                       \
		__u64 t0 = bpf_ktime_get_ns(), t1, t2;                                             \
		acc ^= chain;                                                                      \
		t1 = bpf_ktime_get_ns();                                                           \
		acc ^= chain;                                                                      \
		t2 = bpf_ktime_get_ns();                                                           \
		rec->cold[v] = t1 - t0;                                                            \
		rec->warm[v] = t2 - t1;                                                            \
	} while (0)

static __always_inline __u32 run(int v, __u32 idx, struct maplat_record *rec)
{
	__u32 acc = 0;

	switch (v) {
	case MAPLAT_EMPTY:
		TIMED(MAPLAT_EMPTY, chain_empty(idx));
		break;
	case MAPLAT_ARRAY:
		TIMED(MAPLAT_ARRAY, chain_flat(&rows_array, idx));
		break;
	case MAPLAT_MMAP:
		TIMED(MAPLAT_MMAP, chain_flat(&rows_mmap, idx));
		break;
	case MAPLAT_AOM16K:
		TIMED(MAPLAT_AOM16K, chain_aom(&rows_aom16k, idx, MAPLAT_SMALL_LOG2));
		break;
	case MAPLAT_AOM32K:
		TIMED(MAPLAT_AOM32K, chain_aom(&rows_aom32k, idx, MAPLAT_BIG_LOG2));
		break;
	case MAPLAT_HOT16K:
		acc = heat_outer(&rows_hot16k, MAPLAT_ROWS >> MAPLAT_SMALL_LOG2);
		TIMED(MAPLAT_HOT16K, chain_aom(&rows_hot16k, idx, MAPLAT_SMALL_LOG2));
		break;
	case MAPLAT_HOT32K:
		acc = heat_outer(&rows_hot32k, MAPLAT_ROWS >> MAPLAT_BIG_LOG2);
		TIMED(MAPLAT_HOT32K, chain_aom(&rows_hot32k, idx, MAPLAT_BIG_LOG2));
		break;
	default:
		TIMED(MAPLAT_HASH, chain_flat(&rows_hash, idx));
		break;
	}
	return acc;
}

SEC("perf_event")
int maplat_sample(void *ctx)
{
	__u32 start = bpf_get_prandom_u32() & MASK;
	__u32 cpu = bpf_get_smp_processor_id() % MAPLAT_CPUS;
	__u32 n = nrecords[cpu];
	__u32 key = cpu * MAPLAT_PER_CPU + n, acc = 0;
	struct maplat_record *rec;

	if (n >= MAPLAT_PER_CPU)
		return 0;
	nrecords[cpu] = n + 1;
	rec = bpf_map_lookup_elem(&records, &key);
	if (!rec)
		return 0;
	/* Rotate the order so that no variant always runs first (coldest) or last. */
	for (int j = 0; j < MAPLAT_NVARIANTS; j++) {
		acc ^= run((j + n) % MAPLAT_NVARIANTS, start, rec);
	}
	sink = acc;
	return 0;
}
