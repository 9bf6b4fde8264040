/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_PROBES_ABI_H
#define AUTOPROF_BPF_PROBES_ABI_H

/* Shared between bpf/probes.bpf.c, bpf/oncpu.bpf.c and src/probes/probes.c: __u32/__u64 only. */

/* Probed calls in flight per thread (nested probes, recursion); deeper ones are not timed. */
#define PROBES_MAX_NEST 4

enum probes_call_flags {
	PROBES_CALL_SAMPLED = 1 << 0, /* the sampler took a sample inside this call */
	PROBES_CALL_INNER = 1 << 1,   /* a call of a probe narrowed to this one ran inside it */
};

/* Values a probe captures at its address (the API's "capture"), each read as user space
 * translated its DWARF location: a register plus a constant, then up to PROBES_MAX_READS reads
 * of user memory, each at the value so far plus its offset (the variable in memory, then the
 * pointers its member accesses go through). */
#define PROBES_MAX_CAPTURES 4
#define PROBES_MAX_READS    4

/* x86-64's DWARF register numbers, as struct probes_capture's reg names them. */
#define PROBES_NR_REGS 17 /* rax rdx rcx rbx rsi rdi rbp rsp r8-r15, rip (the probed address) */

enum probes_capture_kind {
	PROBES_CAP_GONE = 0, /* optimized out at this address: no value */
	PROBES_CAP_READ,     /* regs[reg] + add, then the reads */
	PROBES_CAP_CONST,    /* add is the value */
};

struct probes_capture {
	__s64 add;
	__s32 off[PROBES_MAX_READS];
	__u8 kind;     /* enum probes_capture_kind */
	__u8 reg;      /* DWARF register number, < PROBES_NR_REGS */
	__u8 nr_reads; /* 0: the value is the register's (plus add) */
	__u8 size;     /* bytes of the value: the last read's, or of the register's value */
	__u32 pad;
};

/* What one address of a probe (its cookie's high half) captures. */
struct probes_site_key {
	__u32 probe;
	__u32 site;
};

struct probes_captures {
	__u32 nr;
	__u32 pad;
	struct probes_capture c[PROBES_MAX_CAPTURES];
};

/* Bits of a captured set's state, per capture i. */
#define PROBES_VALUE_OK(i)   (1u << (i))	/* values[i] holds the value */
#define PROBES_VALUE_GONE(i) (1u << (8 + (i)))	/* optimized out where the probe fired */
#define PROBES_VALUE_FAULT(i) (1u << (16 + (i))) /* a read of user memory failed */

/* One probed call in flight: its probe, when it began, the stack pointer at its entry, and what
 * its entry captured. */
struct probes_call {
	__u64 start_ns;
	__u64 sp;
	__u32 probe;
	__u32 flags;	/* enum probes_call_flags */
	__u64 values[PROBES_MAX_CAPTURES];
	__u32 captured; /* PROBES_VALUE_* bits */
	__u32 pad;
};

/* Task storage of a thread inside probed calls, innermost last. */
struct probes_thread {
	struct probes_call calls[PROBES_MAX_NEST];
	__u32 depth;
	__u32 pad;
};

/* Per probe (id -> conf): what its programs do. */
enum probes_kind {
	PROBES_KIND_CALL = 0, /* entry and return: a call with its duration */
	PROBES_KIND_LINE,     /* one address: a hit */
};

struct probes_conf {
	__u32 kind;	/* enum probes_kind */
	__u32 inside;	/* probe id whose call must be in flight, 0: any time */
	__u32 captures; /* how many values each address captures (probe_captures) */
	__u32 pad;
};

/* A call ended (or a line was hit: end_ns == start_ns). */
struct probes_event {
	__u64 start_ns; /* bpf_ktime_get_ns() */
	__u64 end_ns;
	__u64 outer_start_ns; /* with conf.inside: the enclosing call of that probe */
	__u32 pid;
	__u32 tid;
	__u32 probe;
	__u32 flags; /* enum probes_call_flags of the call */
	__u64 values[PROBES_MAX_CAPTURES];
	__u32 captured; /* PROBES_VALUE_* bits */
	__u32 pad;
};

enum probes_counter {
	PROBES_CNT_CALLS = 0,	 /* calls timed */
	PROBES_CNT_HITS,	 /* line hits */
	PROBES_CNT_OUTSIDE,	 /* narrowed probe hit outside its enclosing probe's calls */
	PROBES_CNT_NEST_FULL,	 /* more than PROBES_MAX_NEST calls in flight: not timed */
	PROBES_CNT_UNMATCHED,	 /* a return whose entry was not recorded */
	PROBES_CNT_DROP_RINGBUF, /* ring buffer full: event lost */
	PROBES_CNT__MAX,
};

#endif
