/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_FILEIO_H
#define AUTOPROF_LIB_FILEIO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/*
 * Exactly n bytes of fd at off, through short reads and EINTR. Returns 0, -ENODATA when the
 * file ends first (shorter than what its headers said), or the read's -errno.
 */
static inline int fileio__pread_all(int fd, void *p, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)p + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ENODATA;
		done += (size_t)r;
	}
	return 0;
}

#endif
