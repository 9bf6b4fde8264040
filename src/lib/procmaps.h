/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_PROCMAPS_H
#define AUTOPROF_LIB_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>

/* A device as the kernel encodes dev_t inside (major << 20 | minor): what BPF reads from a
 * superblock, unlike glibc's makedev(). */
static inline uint64_t kernel_dev(uint32_t major, uint32_t minor)
{
	return (uint64_t)major << 20 | minor;
}

/* One line of /proc/PID/maps. */
struct map_entry {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	bool readable, writable, executable, shared;
	bool deleted;		/* the path ended in " (deleted)"; stripped from path */
	const char *path;	/* points into the parsed line; "" for anonymous mappings */
};

/*
 * Parses one line (trailing newline allowed) in place: the line buffer is modified and path
 * points into it. Returns 0 or -EINVAL.
 */
int maps__parse_line(char *line, struct map_entry *e);

/*
 * Calls fn for each line of /proc/PID/maps (only executable mappings when exec_only). Stops
 * and returns fn's value when it returns non-zero. Returns 0, a negative errno from opening
 * (-ENOENT: the process is gone), or fn's value.
 */
int maps__for_each(int pid, bool exec_only, int (*fn)(const struct map_entry *e, void *ctx),
		   void *ctx);
/* The same for the process whose /proc/PID directory procfd is (O_PATH is enough): the
 * directory is looked up once for all the files read of a process at its exec. */
int maps__for_each_at(int procfd, bool exec_only, int (*fn)(const struct map_entry *e, void *ctx),
		      void *ctx);

/*
 * Opens the file behind a mapping of a live process: through /proc/PID/map_files (the very file
 * mapped, even deleted or in another mount namespace; needs CAP_SYS_ADMIN), else the path under
 * /proc/PID/root (resolved inside that root: ufile.h). Only a regular file of at most
 * UFILE_MAX_ELF bytes is opened. Returns an fd the caller closes, or a negative errno.
 */
int maps__open_file(int pid, const struct map_entry *e);

#endif
