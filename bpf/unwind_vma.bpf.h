/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_UNWIND_VMA_BPF_H
#define AUTOPROF_BPF_UNWIND_VMA_BPF_H

/*
 * What the samplers' walks (bpf/unwind.bpf.h) and the process collector (bpf/proc.bpf.c) both
 * use of the unwinder: the per-process mapping tables, and the kernel's own mapping of a pc as
 * the unwind tables name it (bpf/unwind_abi.h, struct unwind_inode), for walks that meet code
 * outside the mappings user space published and for the table proc.bpf.c publishes at exec.
 * Both maps are src/unwind/unwind.c's, shared before load.
 */
#include <bpf/bpf_core_read.h>

#include "unwind_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct unwind_inode);
	__type(value, __u32);
} unwind_inodes SEC(".maps");

#define UNWIND_VM_EXEC 0x4 /* include/linux/mm.h */

/* An executable mapping of a file with a slot, into *m: true, or false. */
static __always_inline bool unwind__vma_mapping(struct vm_area_struct *vma,
						struct unwind_mapping *m)
{
	struct unwind_inode key;
	struct inode *inode;
	__u64 start, end, off;
	__u32 *slot;

	if (!(BPF_CORE_READ(vma, vm_flags) & UNWIND_VM_EXEC))
		return false;
	start = BPF_CORE_READ(vma, vm_start);
	end = BPF_CORE_READ(vma, vm_end);
	off = BPF_CORE_READ(vma, vm_pgoff) << 12;
	inode = BPF_CORE_READ(vma, vm_file, f_inode);
	if (inode) {
		key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
		key.ino = BPF_CORE_READ(inode, i_ino);
		/* The nanoseconds' top bits are flags (multigrain timestamps: I_CTIME_QUERIED). */
		key.ctime_ns = BPF_CORE_READ(inode, i_ctime_sec) * 1000000000LL +
			       (BPF_CORE_READ(inode, i_ctime_nsec) & 0x3fffffff);
	} else if (start == (__u64)BPF_CORE_READ(vma, vm_mm, context.vdso)) {
		/* The vDSO's text (clock_gettime's): no file, one image for every process. */
		key = (struct unwind_inode){ 0 };
		off = 0;
	} else {
		return false;
	}
	slot = bpf_map_lookup_elem(&unwind_inodes, &key);
	if (!slot)
		return false;
	if (end - start > 0xffffffffULL || off > 0xffffffffULL)
		return false;
	m->start = start;
	m->len = (__u32)(end - start);
	m->file_off = (__u32)off;
	m->file = *slot;
	m->pad = 0;
	return true;
}

/* bpf_find_vma()'s callback: data is the struct unwind_mapping to fill. */
static __attribute__((unused)) long unwind__vma_cb(struct task_struct *task,
						   struct vm_area_struct *vma, void *data)
{
	unwind__vma_mapping(vma, data);
	return 0;
}

#endif
