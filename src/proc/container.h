/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROC_CONTAINER_H
#define AUTOPROF_PROC_CONTAINER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Container IDs: the 64-hex-digit name that Docker, containerd, CRI-O and Kubernetes put in a
 * process's cgroup path (docker-<id>.scope, cri-containerd-<id>.scope, /docker/<id>), read from
 * /proc/PID/cgroup and kept by the cgroup membership BPF saw at exec (bpf/proc.bpf.c,
 * cgroup_key()), so that an exec into cgroups seen before reads no file.
 */
#define CONTAINER_ID_LEN 64

struct container_ids;

/* A cache of none yet (NULL when out of memory): the caller owns it. */
struct container_ids *container_ids__new(void);
void container_ids__free(struct container_ids *c); /* NULL is fine */

/*
 * BPF's counts of tasks moved between cgroups and of cgroups renamed (mapped memory the caller
 * keeps alive): a read is kept only with both, and when no task moved from the exec to the
 * read. Never called (unit tests, no BPF): nothing is kept.
 */
void container_ids__watch(struct container_ids *c, const volatile uint64_t *moves,
			  const volatile uint64_t *renames);

/*
 * The container ID of the process whose /proc/PID directory is procfd, into id
 * (CONTAINER_ID_LEN + 1 bytes; "" when it is in none, or its file cannot be read). key and
 * moves: its exec's (struct proc_ev); key 0 when not known, which reads the file. procfd -1:
 * the cache alone. Returns whether id is known (cached, or read): false leaves it "".
 */
bool container_ids__get(struct container_ids *c, int procfd, uint64_t key, uint64_t moves,
			char *id);

struct container_stats {
	uint64_t cached;  /* found by key, no file read */
	uint64_t reads;	  /* /proc/PID/cgroup reads */
	uint64_t unkept;  /* of which not kept: a task moved between the exec and the read */
	uint64_t flushes; /* forgotten whole at a cgroup rename */
};
void container_ids__stats(const struct container_ids *c, struct container_stats *out);

#endif
