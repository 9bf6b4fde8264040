/* SPDX-License-Identifier: GPL-2.0-only */
/* bench/maplat: shared between maplat.bpf.c and maplat_tool.c. */
#ifndef MAPLAT_H
#define MAPLAT_H

#define MAPLAT_ROWS_LOG2  20 /* 1 Mi rows of 16 B: 16 MiB, the unwinder's default table */
#define MAPLAT_ROWS	  (1u << MAPLAT_ROWS_LOG2)
#define MAPLAT_SMALL_LOG2 10 /* inner arrays of 1024 rows: 16 KiB + header, kmalloc'd */
#define MAPLAT_BIG_LOG2	  11 /* inner arrays of 2048 rows: 32 KiB + header, just vmalloc'd */
#define MAPLAT_LOOKUPS	  16
#define MAPLAT_CPUS	  8
#define MAPLAT_PER_CPU	  8192
#define MAPLAT_RECORDS	  (MAPLAT_CPUS * MAPLAT_PER_CPU)

enum maplat_variant {
	MAPLAT_EMPTY,  /* the chain's arithmetic and the clock, no memory */
	MAPLAT_ARRAY,  /* one 16 MiB array */
	MAPLAT_MMAP,   /* the same, BPF_F_MMAPABLE */
	MAPLAT_AOM16K, /* array of 1024 arrays of 16 KiB */
	MAPLAT_AOM32K, /* array of 512 arrays of 32 KiB */
	MAPLAT_HOT16K, /* array of arrays of 16 KiB, outer array made hot first (own maps) */
	MAPLAT_HOT32K, /* array of arrays of 32 KiB, outer array made hot first (own maps) */
	MAPLAT_HASH,   /* a preallocated hash of 1 Mi entries */
	MAPLAT_NVARIANTS,
};

struct maplat_row {
	__u32 next; /* the next row's index, random */
	__u32 pad[3];
};

/* One sample: ns for the chain of lookups cold, then again at once (warm). */
struct maplat_record {
	__u32 cold[MAPLAT_NVARIANTS];
	__u32 warm[MAPLAT_NVARIANTS];
};

#endif
