// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spends its time in the kernel: read_zeros() reads /dev/zero in 64 KiB chunks, so samples land
 * in the kernel's read path (ksys_read, vfs_read, read_zero...) under this user function.
 *   syscall_heavy SECONDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

__attribute__((noinline)) long read_zeros(int fd, int rounds)
{
	long total = 0;

	for (int i = 0; i < rounds; i++)
		total += read(fd, buf, sizeof(buf));
	return total;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	int fd = open("/dev/zero", O_RDONLY);
	time_t end = time(NULL) + (time_t)secs;

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	while (time(NULL) < end)
		read_zeros(fd, 256);
	close(fd);
	return 0;
}
