/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_PROCMEM_H
#define AUTOPROF_LIB_PROCMEM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Another process's memory, through /proc/PID/mem. A read there cannot fault in autoprof: a
 * page the process has unmapped, or a file mapping truncated under it, makes the read fail or
 * come back short, where a mapping of the same pages would raise SIGBUS. The kernel checks
 * ptrace access once, at open, so a caller reading often keeps the fd.
 */

/*
 * Opens pid's memory read-only (close-on-exec). Returns the fd, which the caller owns and
 * closes, or a negative errno from open (-ENOENT: no such process).
 */
int procmem__open(uint32_t pid);

/*
 * The same, writable too: for a process that asks to be written to (the preload shim's
 * record). Returns the fd (the caller's) or a negative errno.
 */
int procmem__open_rw(uint32_t pid);

/*
 * Reads len bytes at addr through fd (procmem__open's, or any file laid out like a process's
 * memory). Returns 0, a negative errno from pread, or -EIO when fewer bytes came: the range
 * runs into a page the process does not map. A short read is never a success.
 */
int procmem__read(int fd, uint64_t addr, void *buf, size_t len);

/* Writes len bytes at addr: 0, a negative errno from pwrite, or -EIO when fewer went. */
int procmem__write(int fd, uint64_t addr, const void *buf, size_t len);

/* Opens pid's memory, reads len bytes at addr, closes: for a value read once in a while. */
int procmem__read_once(uint32_t pid, uint64_t addr, void *buf, size_t len);

#endif
