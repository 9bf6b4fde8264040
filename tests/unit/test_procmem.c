/* DEPS: src/lib/procmem.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Another process's memory (lib/procmem.h), here our own through /proc/self/mem: a range that
 * runs into a page no longer mapped, or into a file truncated under its mapping, is an error,
 * never a short success and never a SIGBUS.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/procmem.h"
#include "testlib.h"

/* Beyond any pid_max: no process has it. */
#define NO_PID 0x7ffffff0u

static long page;

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* A page with a hole after it: a range across the end starts readable and ends in nothing. */
static uint8_t *page_then_hole(void)
{
	uint8_t *p =
	    mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p + page, page);
	memset(p, 0xab, page);
	return p;
}

TEST(reads_whole_ranges)
{
	static const char want[] = "read through /proc/self/mem";
	char got[sizeof(want)];
	int fd = procmem__open(getpid());

	CHECK(fd >= 0);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	memset(got, 0, sizeof(got));
	CHECK_EQ(procmem__read(fd, addr(want), got, sizeof(got)), 0);
	close(fd);
	CHECK_STR(got, want);
	memset(got, 0, sizeof(got));
	CHECK_EQ(procmem__read_once(getpid(), addr(want), got, sizeof(got)), 0);
	CHECK_STR(got, want);
}

TEST(short_read_is_an_error)
{
	uint8_t *p = page_then_hole(), buf[64];
	int fd = procmem__open(getpid());

	CHECK(p);
	CHECK(fd >= 0);
	/* Half of it mapped: the kernel copies that half and stops. */
	CHECK_EQ(procmem__read(fd, addr(p + page - 32), buf, sizeof(buf)), -EIO);
	CHECK_EQ(procmem__read_once(getpid(), addr(p + page - 32), buf, sizeof(buf)), -EIO);
	CHECK_EQ(procmem__read(fd, addr(p + page), buf, sizeof(buf)), -EIO);
	CHECK_EQ(procmem__read(fd, addr(p + page - 32), buf, 32), 0);
	CHECK_EQ(buf[0], 0xab);
	CHECK_EQ(buf[31], 0xab);
	close(fd);
	munmap(p, page);
}

TEST(truncated_file_is_an_error_not_sigbus)
{
	int mfd = memfd_create("procmem", MFD_CLOEXEC), fd;
	uint8_t buf[64];
	uint8_t *p;

	CHECK(mfd >= 0);
	CHECK(!ftruncate(mfd, 2 * page));
	p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, mfd, 0);
	CHECK(p != MAP_FAILED);
	/* Touching p[page] now would be a SIGBUS. */
	CHECK(!ftruncate(mfd, page));
	close(mfd);
	fd = procmem__open(getpid());
	CHECK(fd >= 0);
	CHECK_EQ(procmem__read(fd, addr(p + page - 32), buf, sizeof(buf)), -EIO);
	CHECK_EQ(procmem__read(fd, addr(p + page), buf, sizeof(buf)), -EIO);
	CHECK_EQ(procmem__read(fd, addr(p), buf, sizeof(buf)), 0);
	close(fd);
	munmap(p, 2 * page);
}

TEST(writes_only_when_opened_writable)
{
	static uint64_t word = 1;
	uint8_t *p = page_then_hole(), junk[64] = {0};
	uint64_t v = 42;
	int ro = procmem__open(getpid()), rw = procmem__open_rw(getpid());

	CHECK(p);
	CHECK(ro >= 0);
	CHECK(rw >= 0);
	CHECK(fcntl(rw, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ(procmem__write(ro, addr(&word), &v, sizeof(v)), -EBADF);
	CHECK_EQ(*(volatile uint64_t *)&word, 1);
	CHECK_EQ(procmem__write(rw, addr(&word), &v, sizeof(v)), 0);
	CHECK_EQ(*(volatile uint64_t *)&word, 42);
	CHECK_EQ(procmem__write(rw, addr(p + page - 32), junk, sizeof(junk)), -EIO);
	close(ro);
	close(rw);
	munmap(p, page);
}

TEST(process_gone)
{
	uint64_t v;

	CHECK_EQ(procmem__open(NO_PID), -ENOENT);
	CHECK_EQ(procmem__open_rw(NO_PID), -ENOENT);
	CHECK_EQ(procmem__read_once(NO_PID, 0, &v, sizeof(v)), -ENOENT);
	CHECK_EQ(procmem__read(-1, 0, &v, sizeof(v)), -EBADF);
}

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	RUN(reads_whole_ranges);
	RUN(short_read_is_an_error);
	RUN(truncated_file_is_an_error_not_sigbus);
	RUN(writes_only_when_opened_writable);
	RUN(process_gone);
	return test_summary();
}
