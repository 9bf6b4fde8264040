// SPDX-License-Identifier: GPL-2.0-only
/*
 * Container IDs by cgroup membership. Under exec churn, reading each new process's
 * /proc/PID/cgroup was 18 % of the agent's CPU (a dozen lines on a host with v1 and v2
 * hierarchies), though a container's processes, like the host's, share a handful of
 * memberships. BPF gives each exec a key of its cgroups, one per hierarchy (bpf/proc.bpf.c);
 * the first exec with a key reads the file, the next ones a slot here.
 *
 * What is kept must be what the file says for that key. The key is taken at exec and the file
 * read a little later: a process moved to other cgroups in between would file the new ones' ID
 * under the old key, for every later process there. So a read is kept only when BPF counted no
 * move of any task since the exec (moves are rare: a container's start, a service's). A
 * rename (cgroup v1's) changes paths under unchanged keys: then everything is forgotten.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/container.h"

/* Direct-mapped (the key is a hash already): 1024 memberships in ~90 KiB, made at first use. */
#define SLOTS 1024

struct slot {
	uint64_t key; /* 0: empty */
	char id[CONTAINER_ID_LEN + 1];
};

struct container_ids {
	const volatile uint64_t *moves, *renames;
	uint64_t renames_seen; /* *renames when the slots were last emptied */
	struct slot *slots;
	struct container_stats stats;
};

struct container_ids *container_ids__new(void)
{
	return calloc(1, sizeof(struct container_ids));
}

void container_ids__free(struct container_ids *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c);
}

void container_ids__watch(struct container_ids *c, const volatile uint64_t *moves,
			  const volatile uint64_t *renames)
{
	c->moves = moves;
	c->renames = renames;
	c->renames_seen = renames ? *renames : 0;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/*
 * The last run of exactly 64 hex digits in the process's cgroup file (one line a hierarchy).
 * Returns whether the file was read: a process gone has none, and says nothing of its key.
 */
static bool read_id(int procfd, char *id)
{
	/* A dozen lines on a hybrid host; an id past this is not looked for. */
	char buf[8192];
	size_t n = 0, run = 0;
	ssize_t r = 0;
	int fd;

	id[0] = '\0';
	fd = openat(procfd, "cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	/* Failed or empty (a process on its way out): read as none, kept for no key. */
	if (r < 0 || !n)
		return false;
	buf[n] = '\0';
	for (char *c = buf; *c; c++) {
		run = is_hex(*c) ? run + 1 : 0;
		if (run == CONTAINER_ID_LEN && !is_hex(c[1])) {
			memcpy(id, c - (CONTAINER_ID_LEN - 1), CONTAINER_ID_LEN);
			id[CONTAINER_ID_LEN] = '\0';
		}
	}
	return true;
}

bool container_ids__get(struct container_ids *c, int procfd, uint64_t key, uint64_t moves, char *id)
{
	bool keep = c && key && c->moves && c->renames;
	uint64_t renames = keep ? *c->renames : 0;
	struct slot *s = NULL;
	bool ok;

	if (keep) {
		if (renames != c->renames_seen) {
			if (c->slots)
				memset(c->slots, 0, SLOTS * sizeof(*c->slots));
			c->renames_seen = renames;
			c->stats.flushes++;
		}
		if (!c->slots)
			c->slots = calloc(SLOTS, sizeof(*c->slots));
		s = c->slots ? &c->slots[key % SLOTS] : NULL;
		if (s && s->key == key) {
			memcpy(id, s->id, sizeof(s->id));
			c->stats.cached++;
			return true;
		}
	}
	if (procfd < 0) {
		id[0] = '\0';
		return false;
	}
	ok = read_id(procfd, id);
	if (!c)
		return ok;
	c->stats.reads++;
	if (!s || !ok)
		return ok;
	/* Read after the file: a move or rename during the read counts as one before it. */
	if (*c->moves != moves || *c->renames != renames) {
		c->stats.unkept++;
		return ok;
	}
	s->key = key;
	memcpy(s->id, id, sizeof(s->id));
	return ok;
}

void container_ids__stats(const struct container_ids *c, struct container_stats *out)
{
	*out = c ? c->stats : (struct container_stats){0};
}
