/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_PROCFS_H
#define AUTOPROF_LIB_PROCFS_H

#include <stdint.h>

/*
 * When pid started, in clock ticks after boot (/proc/PID/stat's starttime): with the pid, it
 * names one process, not a later one the kernel gave the same pid. 0 when the process is gone.
 */
unsigned long long procfs__start_ticks(uint32_t pid);

#endif
