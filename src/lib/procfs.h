/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_PROCFS_H
#define AUTOPROF_LIB_PROCFS_H

#include <stdint.h>
#include <sys/types.h>

/*
 * When pid started, in clock ticks after boot (/proc/PID/stat's starttime): with the pid, it
 * names one process, not a later one the kernel gave the same pid. 0 when the process is gone.
 */
unsigned long long procfs__start_ticks(uint32_t pid);

/*
 * pid's effective uid and the pid it knows itself by in its own pid namespace (/proc/PID/status:
 * Uid's second field, NSpid's last). Returns 0, or -ESRCH when the process is gone.
 */
int procfs__ids(uint32_t pid, uid_t *euid, int *nspid);

#endif
