/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PYTHON_PROCS_BPF_H
#define AUTOPROF_PYTHON_PROCS_BPF_H

/*
 * pid -> where its CPython runtime is and the offsets of its version (bpf/python.h). User space
 * fills it (src/collect/python.c); bpf/proc.bpf.c owns it and clears a pid at exec and exit, as
 * it does tracectx_offsets, so a new image never inherits the old one's offsets.
 */
#include "python.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* nothing without a Python process */
	__type(key, __u32);
	__type(value, struct python_proc);
} python_procs SEC(".maps");

#endif
