// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/procmem.h"

static int open_mem(uint32_t pid, int flags)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int procmem__open(uint32_t pid)
{
	return open_mem(pid, O_RDONLY);
}

int procmem__open_rw(uint32_t pid)
{
	return open_mem(pid, O_RDWR);
}

int procmem__read(int fd, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len, (off_t)addr);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int procmem__write(int fd, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n = pwrite(fd, buf, len, (off_t)addr);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int procmem__read_once(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	int fd = procmem__open(pid), err;

	if (fd < 0)
		return fd;
	err = procmem__read(fd, addr, buf, len);
	close(fd);
	return err;
}
