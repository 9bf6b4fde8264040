// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "maps: " fmt

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/ufile.h"
#include "lib/procmaps.h"

#define DELETED_SUFFIX " (deleted)"

/* Parses hex digits up to a separator; strtoull would accept signs, spaces and "0x". */
static int field__hex(char **pp, char sep, uint64_t *out)
{
	char *p = *pp;
	uint64_t v = 0;
	int digits = 0;

	for (;; p++, digits++) {
		char c = *p;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v << 4 | (uint64_t)((c | 0x20) - 'a' + 10);
		else
			break;
	}
	if (!digits || digits > 16 || *p != sep)
		return -EINVAL;
	*pp = p + 1;
	*out = v;
	return 0;
}

static int field__dec(char **pp, uint64_t *out)
{
	char *p = *pp;
	uint64_t v = 0;
	int digits = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (!digits || digits > 20 || (*p && *p != ' ' && *p != '\n'))
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

int maps__parse_line(char *line, struct map_entry *e)
{
	char *p = line, *path, *end;
	uint64_t major, minor;
	size_t len;

	memset(e, 0, sizeof(*e));
	if (field__hex(&p, '-', &e->start) || field__hex(&p, ' ', &e->end) || e->end < e->start)
		return -EINVAL;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	e->readable = p[0] == 'r';
	e->writable = p[1] == 'w';
	e->executable = p[2] == 'x';
	e->shared = p[3] == 's';
	p += 5;
	if (field__hex(&p, ' ', &e->pgoff) || field__hex(&p, ':', &major) ||
	    field__hex(&p, ' ', &minor) || field__dec(&p, &e->inode))
		return -EINVAL;
	if (major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	e->dev_major = (uint32_t)major;
	e->dev_minor = (uint32_t)minor;

	/* The kernel pads to a column before the path; the path itself may hold spaces. */
	path = p;
	while (*path == ' ')
		path++;
	len = strlen(path);
	if (len && path[len - 1] == '\n')
		path[--len] = '\0';
	end = path + len;
	if (len >= sizeof(DELETED_SUFFIX) - 1 &&
	    !strcmp(end - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX)) {
		e->deleted = true;
		end -= sizeof(DELETED_SUFFIX) - 1;
		*end = '\0';
	}
	e->path = path;
	return 0;
}

/* The lines of an open maps file (closed here). */
static int maps__for_each_fd(int fd, bool exec_only,
			     int (*fn)(const struct map_entry *e, void *ctx), void *ctx)
{
	char *line = NULL;
	size_t line_size = 0;
	int err = 0;
	FILE *f;

	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		struct map_entry e;
		ssize_t n;

		errno = 0;
		n = getline(&line, &line_size, f);
		if (n < 0) {
			/* A process exiting mid-read ends the file early; that is not an error. */
			if (ferror(f) && errno && errno != ESRCH)
				err = -errno;
			break;
		}
		if (maps__parse_line(line, &e)) {
			pr_debug("cannot parse: %s", line);
			continue;
		}
		if (exec_only && !e.executable)
			continue;
		err = fn(&e, ctx);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	return err;
}

int maps__for_each(int pid, bool exec_only, int (*fn)(const struct map_entry *e, void *ctx),
		   void *ctx)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return maps__for_each_fd(fd, exec_only, fn, ctx);
}

int maps__for_each_at(int procfd, bool exec_only, int (*fn)(const struct map_entry *e, void *ctx),
		      void *ctx)
{
	int fd = openat(procfd, "maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return maps__for_each_fd(fd, exec_only, fn, ctx);
}

int maps__open_file(int pid, const struct map_entry *e)
{
	/* Its owner may truncate it or swap it while autoprof reads: see ufile.h. */
	const struct ufile_how how = { .max_size = UFILE_MAX_ELF };
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, e->start,
		 e->end);
	fd = ufile__open_magic(path, &how, NULL);
	/* Refused (a device mapped executable, too large): the path leads to the same file. */
	if (fd >= 0 || fd == -EINVAL || fd == -EFBIG)
		return fd;
	return ufile__open_proc(pid, e->path, &how, NULL);
}
