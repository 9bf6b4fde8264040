/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROBES_BPF_H
#define AUTOPROF_PROBES_BPF_H

#include "probes_abi.h"

/*
 * Thread -> the probed calls it is inside. bpf/probes.bpf.c owns it (entry pushes, return pops);
 * the on-CPU sampler includes this definition and reuses the probe collector's map
 * (collect__share_maps), so that a sample knows the calls it was taken in. The kernel frees a
 * thread's storage when it exits.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct probes_thread);
} probe_threads SEC(".maps");

#endif
