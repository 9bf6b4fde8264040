/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_MEMORY_MEMTARGET_H
#define AUTOPROF_MEMORY_MEMTARGET_H

/*
 * What a memory target is (a pid, an executable-name glob or a cgroup), as the API and the
 * config give it, and how a process is matched against it; apart from BPF so that it is unit
 * tested.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A cgroup, as /proc/PID/cgroup names it: the hierarchy (cgroup v2, or the v1 hierarchy of
 * some controllers) and the path inside it.
 */
struct memcg {
	char dir[256];	       /* the cgroup's directory, as given (no trailing '/') */
	char rel[256];	       /* its path inside its hierarchy, "/" for the root */
	char controllers[256]; /* v1: the hierarchy's mount options ("rw,memory"); "" for v2 */
	bool v2;
};

/*
 * Resolves dir, the absolute path of a cgroup directory, against the text of
 * /proc/self/mountinfo: the cgroup or cgroup2 mount holding it (the longest mount point that is
 * a prefix). 0, or -ENOENT with a reason in why when no cgroup file system holds it.
 */
int memcg__resolve(const char *mountinfo, const char *dir, struct memcg *out, char *why,
		   size_t why_len);
/* True when the text of a /proc/PID/cgroup puts the process in cg or a cgroup below it. */
bool memcg__match(const struct memcg *cg, const char *proc_cgroup);
/* memcg__resolve against this machine: dir must be a directory. 0 or -ENOENT with why. */
int memcg__lookup(const char *dir, struct memcg *out, char *why, size_t why_len);

/* A memory target: a process id, a glob on the executable name, or a cgroup. */
#define MEMORY_MAX_TARGETS 64 /* each is matched against every exec: a bound on that cost */
struct memtarget_spec {
	uint32_t pid;	   /* 0 with a pattern or a cgroup */
	char pattern[256]; /* "" with a pid or a cgroup */
	bool is_cgroup;
	struct memcg cgroup;
};

/*
 * Parses an API request body, {"pid": 123}, {"exe": "pattern"} or {"cgroup": "/sys/fs/cgroup/x"}
 * (one key, JSON; the cgroup is looked up on this machine). Returns 0, or -EINVAL with a reason
 * in why.
 */
int memtarget__parse(const char *body, struct memtarget_spec *out, char *why, size_t why_len);
/*
 * Parses one memory.targets entry: "cgroup:DIR" or an executable-name glob. 0, or -EINVAL with a
 * reason in why.
 */
int memtarget__parse_config(const char *entry, struct memtarget_spec *out, char *why,
			    size_t why_len);
/* True when exe (a basename) matches the glob. */
bool memtarget__match(const char *pattern, const char *exe);

#endif
