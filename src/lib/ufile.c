// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "ufile: " fmt

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/ufile.h"

static uint64_t counts[UFILE_NR_REASONS];
/* Cleared once openat2 said ENOSYS (kernels before 5.6, old seccomp profiles). */
static bool have_openat2 = true;

static const char *const reason_names[UFILE_NR_REASONS] = {
	[UFILE_NOT_REGULAR] = "not_regular",
	[UFILE_TOO_LARGE] = "too_large",
	[UFILE_SYMLINK] = "symlink",
	[UFILE_OWNER] = "owner",
	[UFILE_TRUNCATED] = "truncated",
	[UFILE_OVERLONG_LINE] = "overlong_line",
	[UFILE_READ_ERROR] = "read_error",
};

void ufile__count(enum ufile_reason r)
{
	if (r < UFILE_NR_REASONS)
		__atomic_fetch_add(&counts[r], 1, __ATOMIC_RELAXED);
}

const char *ufile__reason_name(enum ufile_reason r)
{
	return r < UFILE_NR_REASONS ? reason_names[r] : "unknown";
}

void ufile__stats(uint64_t out[UFILE_NR_REASONS])
{
	for (int i = 0; i < UFILE_NR_REASONS; i++)
		out[i] = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
}

int ufile__read_failed(int fd, int64_t size_at_open)
{
	struct stat st;

	if (!fstat(fd, &st) && st.st_size < size_at_open)
		ufile__count(UFILE_TRUNCATED);
	else
		ufile__count(UFILE_READ_ERROR);
	return -EIO;
}

int ufile__root(int pid)
{
	char path[32];
	int fd;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/root", pid);
	fd = open(pid > 0 ? path : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Keeps fd when what it leads to passes how's checks, else closes it. */
static int ufile__check(int fd, const struct ufile_how *how, struct stat *out)
{
	enum ufile_reason r;
	struct stat st;
	int err, fl;

	if (fstat(fd, &st)) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		r = UFILE_NOT_REGULAR;
		err = -EINVAL;
		goto out_refuse;
	}
	if (how->max_size && (uint64_t)st.st_size > how->max_size) {
		r = UFILE_TOO_LARGE;
		err = -EFBIG;
		goto out_refuse;
	}
	if ((how->flags & UFILE_F_OWNER) && st.st_uid && st.st_uid != how->owner) {
		r = UFILE_OWNER;
		err = -EPERM;
		goto out_refuse;
	}
	/* A regular file ignores O_NONBLOCK today; cleared so that no reader ever sees EAGAIN. */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (out)
		*out = st;
	return fd;

out_refuse:
	ufile__count(r);
out_close:
	close(fd);
	return err;
}

/* path as one relative to a root directory fd: "/a/b" -> "a/b", "/" -> ".". */
static const char *relative(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

int ufile__openat(int rootfd, const char *path, const struct ufile_how *how, struct stat *st)
{
	const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
	const char *rel = relative(path);
	int fd;

	if (__atomic_load_n(&have_openat2, __ATOMIC_RELAXED)) {
		struct open_how oh = {
		    .flags = flags,
		    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
			       (how->flags & UFILE_F_NO_SYMLINKS ? RESOLVE_NO_SYMLINKS : 0),
		};

		fd = (int)syscall(SYS_openat2, rootfd, rel, &oh, sizeof(oh));
		if (fd >= 0)
			return ufile__check(fd, how, st);
		if (errno != ENOSYS)
			goto out_err;
		__atomic_store_n(&have_openat2, false, __ATOMIC_RELAXED);
		pr_warn("no openat2: symlinks in containers resolve on the host\n");
	}
	/* Without openat2 only the last component can be held back. */
	fd = openat(rootfd, rel, flags | (how->flags & UFILE_F_NO_SYMLINKS ? O_NOFOLLOW : 0));
	if (fd >= 0)
		return ufile__check(fd, how, st);
out_err:
	/* ELOOP: a symlink under RESOLVE_NO_SYMLINKS/O_NOFOLLOW, or a magic link. */
	if (errno == ELOOP)
		ufile__count(UFILE_SYMLINK);
	return -errno;
}

int ufile__open_proc(int pid, const char *path, const struct ufile_how *how, struct stat *st)
{
	int root = ufile__root(pid), fd;

	if (root < 0)
		return root;
	fd = ufile__openat(root, path, how, st);
	close(root);
	return fd;
}

int ufile__open_magic(const char *path, const struct ufile_how *how, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	return ufile__check(fd, how, st);
}

int ufile__opendir(int rootfd, const char *path)
{
	struct open_how oh = {
	    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	const char *rel = relative(path);
	int fd;

	fd = (int)syscall(SYS_openat2, rootfd, rel, &oh, sizeof(oh));
	if (fd >= 0)
		return fd;
	if (errno != ENOSYS)
		return -errno;
	fd = openat(rootfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
