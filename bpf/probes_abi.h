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

/* One probed call in flight: its probe, when it began, the stack pointer at its entry. */
struct probes_call {
	__u64 start_ns;
	__u64 sp;
	__u32 probe;
	__u32 flags; /* enum probes_call_flags */
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
	__u32 kind;   /* enum probes_kind */
	__u32 inside; /* probe id whose call must be in flight, 0: any time */
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
