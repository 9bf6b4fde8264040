/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PYTHON_PROCS_BPF_H
#define AUTOPROF_PYTHON_PROCS_BPF_H

/*
 * pid -> where its CPython runtime is and the offsets of its version (bpf/python_abi.h). User space
 * fills it (src/runtime/python.c); bpf/proc.bpf.c owns it and clears a pid at exec and exit, as
 * it does tracectx_offsets, so a new image never inherits the old one's offsets.
 */
#include "python_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* nothing without a Python process */
	__type(key, __u32);
	__type(value, struct python_proc);
} python_procs SEC(".maps");

/*
 * thread id -> its thread state, as last found: a thread's is checked (its thread_id still the
 * thread's fsbase) with one read instead of searched for, and a thread that started long after
 * the main one is found however many threads came before. One map for every sampler (the
 * process collector's, shared before load): a thread's state is the same whoever looks.
 * Grows with use (an LRU map is preallocated: 1.3 MB with no Python process); a thread's entry
 * goes at its exit (bpf/proc.bpf.c), and with the map full a new thread is searched for at
 * each sample instead.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} python_threads SEC(".maps");

#endif
