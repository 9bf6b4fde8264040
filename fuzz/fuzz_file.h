/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_FUZZ_FILE_H
#define AUTOPROF_FUZZ_FILE_H
/*
 * For targets whose parser takes a file: the input as the whole contents of one memfd, made once
 * per process and rewritten for each input (an fd of our own, so a parser that opens, maps or
 * preads it sees exactly the input, and its size is the input's).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static inline int fuzz__file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	size_t off = 0;

	if (fd < 0)
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0))
		abort();
	while (off < size) {
		ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);

		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET))
		abort();
	return fd;
}

/* The memfd's path, for parsers that open a path themselves. */
static inline const char *fuzz__file_path(int fd)
{
	static char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}

#endif
