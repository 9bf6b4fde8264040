/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_BPFMAP_H
#define AUTOPROF_LIB_BPFMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Deletes every entry of the BPF hash map_fd whose key (key_size bytes, at most 64) starts
 * with the __u32 pid: what a process left in a table keyed by (pid, ...) when it exits. The
 * walk is over the whole map: for tables of a few thousand entries, at an exit or an exec.
 */
void bpfmap__delete_pid(int map_fd, size_t key_size, uint32_t pid);

#endif
