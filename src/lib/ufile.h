/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_UFILE_H
#define AUTOPROF_UFILE_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Untrusted files: the one way autoprof (root) opens a path that another user or a container
 * controls (a perf map in /tmp, an ELF object under /proc/PID/root, a probe's binary). Such a
 * path may be a symlink out of the container, a FIFO that blocks open() and read() forever, a
 * device (/dev/zero reads without end), or a file its owner truncates while it is read.
 *
 * The path is resolved inside a root directory (openat2 RESOLVE_IN_ROOT: ".." and absolute
 * symlinks stop at that root, as they do for the process that owns it; RESOLVE_NO_MAGICLINKS:
 * no /proc/PID/fd/N jump out of it), opened O_RDONLY|O_NONBLOCK (a FIFO does not block the
 * open), and kept only when fstat says it is a regular file no larger than the caller's cap.
 * Every refusal is counted by reason for /metrics (autoprof_file_errors_total{reason}).
 */

enum ufile_reason {
	UFILE_NOT_REGULAR,	/* FIFO, device, directory, socket */
	UFILE_TOO_LARGE,	/* over the caller's cap */
	UFILE_SYMLINK,		/* a symlink where none is allowed (perf maps), a magic link */
	UFILE_OWNER,		/* owned by neither the process's user nor root */
	UFILE_TRUNCATED,	/* shrank while read (or since it was opened) */
	UFILE_OVERLONG_LINE,	/* a text line over its reader's cap, skipped */
	UFILE_READ_ERROR,	/* read failed (EIO, a short read of a file that did not shrink) */
	UFILE_NR_REASONS,
};

/* Flags of struct ufile_how. */
#define UFILE_F_NO_SYMLINKS (1u << 0) /* refuse any symlink on the way (RESOLVE_NO_SYMLINKS) */
#define UFILE_F_OWNER	    (1u << 1) /* the file must be owned by how->owner or by root */

struct ufile_how {
	unsigned int flags;
	uint64_t max_size; /* 0: no cap */
	uid_t owner;	   /* with UFILE_F_OWNER */
};

/* Where a process's paths resolve: /proc/PID/root as an O_PATH directory; pid 0: the host's "/".
 * Returns the fd (the caller's) or a negative errno. */
int ufile__root(int pid);

/*
 * Opens path (absolute or relative: both taken from rootfd) inside rootfd. Returns the fd
 * (the caller's: O_RDONLY|O_CLOEXEC, O_NONBLOCK cleared) or a negative errno: -EINVAL not a
 * regular file, -EFBIG over max_size, -ELOOP a refused symlink, -EPERM a refused owner, others
 * from the open. st (may be NULL) gets the file's fstat.
 */
int ufile__openat(int rootfd, const char *path, const struct ufile_how *how, struct stat *st);
/* The same inside the root of process pid (ufile__root(pid)). */
int ufile__open_proc(int pid, const char *path, const struct ufile_how *how, struct stat *st);
/*
 * Opens a path the kernel provides that leads to exactly one file (/proc/PID/map_files/S-E, a
 * magic link to the file mapped there; /proc/self/fd/N), with the same checks on what it leads
 * to (regular, size, owner). UFILE_F_NO_SYMLINKS makes no sense here and is ignored.
 */
int ufile__open_magic(const char *path, const struct ufile_how *how, struct stat *st);

/*
 * Opens directory path inside rootfd as an O_PATH descriptor, resolved as ufile__openat does
 * (a container's /tmp that is a symlink to /etc names its own /etc, never the host's). For
 * openat() of names in it, with O_NOFOLLOW. Returns the fd or a negative errno.
 */
int ufile__opendir(int rootfd, const char *path);

/* Counts one refusal or error of reason r (atomic, any thread). */
void ufile__count(enum ufile_reason r);
/*
 * After a read of fd failed: counts it as UFILE_TRUNCATED when the file is now smaller than
 * size_at_open, else UFILE_READ_ERROR. Returns -EIO.
 */
int ufile__read_failed(int fd, int64_t size_at_open);
/* The reason's label value ("not_regular", ...). */
const char *ufile__reason_name(enum ufile_reason r);
/* Counts so far, indexed by enum ufile_reason. */
void ufile__stats(uint64_t out[UFILE_NR_REASONS]);

/* Caps for callers: a mapped ELF object or debug file, read piecewise (ELF_C_READ). */
#define UFILE_MAX_ELF (16ull << 30)

#endif
