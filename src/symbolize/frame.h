/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_SYMBOLIZE_FRAME_H
#define AUTOPROF_SYMBOLIZE_FRAME_H

#include <stdint.h>

struct dso;

/*
 * One stack frame as the store keeps it: which object the code belongs to and where in it.
 * For DSO_ELF, addr is the offset in the file (what pprof calls the address in a mapping that
 * starts at 0 with file_offset 0); for the kernel, the kernel virtual address; for anon and
 * unknown frames, the process virtual address. The store holds a reference on dso.
 */
struct frame {
	struct dso *dso;
	uint64_t addr;
};

#endif
