/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_HELPERS_BPF_H
#define AUTOPROF_HELPERS_BPF_H

/*
 * What every BPF program here needs the same way. The including .bpf.c has included
 * "vmlinux.h" first.
 */
#include <bpf/bpf_helpers.h>

/* task_struct->flags: a kernel thread (a macro in the kernel, so not in vmlinux.h). */
#define PF_KTHREAD 0x00200000

/*
 * Slot idx of a per-CPU array of __u64 counters (each object's counters map, which user space
 * sums over the CPUs), or NULL for an index past its end.
 */
static __always_inline __u64 *counters__slot(void *counters, __u32 idx)
{
	return bpf_map_lookup_elem(counters, &idx);
}

/*
 * Adds n to slot idx. This CPU's copy takes a plain add, no atomic: these are statistics, and
 * a preemptible program (a uprobe's) interrupted by another counting into the same slot may
 * lose one. A macro, so that the key lives until the add: passed by value to an inline
 * function, it dies before the add, and clang then lays the bigger programs out differently
 * (more instructions for the verifier to walk in some).
 */
#define counters__add(counters, idx, n)                                                            \
	({                                                                                         \
		__u32 __key = (idx);                                                               \
		__u64 *__c = bpf_map_lookup_elem(counters, &__key);                                \
                                                                                                   \
		if (__c)                                                                           \
			*__c += (n);                                                               \
	})

/*
 * Whether at least *bytes wait in ring: only then is user space woken (BPF_RB_FORCE_WAKEUP),
 * otherwise it drains on its own timer and a busy ring costs no wakeup per record. bytes
 * points at the object's read-only setting, which is then loaded after the query rather than
 * held in a register across it.
 */
static __always_inline bool ringbuf__filled(void *ring, const volatile __u64 *bytes)
{
	return bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= *bytes;
}

#endif
