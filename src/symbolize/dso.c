// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/dso_priv.h"
#include "symbolize/objsym.h"
#include "symbolize/perfmap.h"

static uint32_t next_dso_id = 1; /* atomic */

struct dso *dso__new(enum dso_kind kind, const char *path, int fd)
{
	struct dso *dso = calloc(1, sizeof(*dso));

	if (!dso)
		return NULL;
	dso->path = strdup(path);
	if (!dso->path) {
		free(dso);
		return NULL;
	}
	dso->refcnt = 1;
	dso->id = __atomic_fetch_add(&next_dso_id, 1, __ATOMIC_RELAXED);
	dso->kind = kind;
	dso->fd = fd;
	dso->debug_fd = -1;
	return dso;
}

enum dso_kind dso__kind(const struct dso *dso)
{
	return dso->kind;
}

const char *dso__path(const struct dso *dso)
{
	return dso->path;
}

const char *dso__build_id(const struct dso *dso)
{
	return dso->build_id;
}

int dso__fd(const struct dso *dso)
{
	return dso->kind == DSO_ELF || dso->kind == DSO_VDSO ? dso->fd : -1;
}

int dso__file_key(const struct dso *dso, struct dso_file_key *key)
{
	if (dso->kind != DSO_ELF || dso->fd < 0 || dso->ctime_ns < 0)
		return -ENOENT;
	*key = (struct dso_file_key){ (uint64_t)dso->dev, dso->ino, dso->ctime_ns, dso->size };
	return 0;
}

uint32_t dso__id(const struct dso *dso)
{
	return dso->id;
}

struct dso *dso__get(struct dso *dso)
{
	if (dso)
		__atomic_fetch_add(&dso->refcnt, 1, __ATOMIC_RELAXED);
	return dso;
}

void dso__put(struct dso *dso)
{
	if (!dso || __atomic_sub_fetch(&dso->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	objsym__free(dso->syms);
	perf_map__free(dso->perf_map);
	free(dso->perf_map_paths[0]);
	free(dso->perf_map_paths[1]);
	if (dso->fd >= 0)
		close(dso->fd);
	if (dso->debug_fd >= 0)
		close(dso->debug_fd);
	free(dso->path);
	free(dso);
}
