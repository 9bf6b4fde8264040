// SPDX-License-Identifier: GPL-2.0-only
/* The unwind tables' elements, chunk by chunk (chunks.h). */
#define pr_fmt(fmt) "unwind: " fmt

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/unwind_abi.h"
#include "lib/log.h"
#include "unwind/chunks.h"

#define ELEM_BYTES  8
#define CHUNK_BYTES ((size_t)UNWIND_CHUNK_ELEMS * ELEM_BYTES)

struct chunks {
	int fd; /* the outer ARRAY_OF_MAPS */
	uint32_t capacity, nr_max;
	uint32_t nr; /* chunks made, [0, nr) */
	uint64_t chunk_memlock;
	int *fds;
	/* Published with release stores once made, read with acquire loads by any thread. */
	char **mem;
};

static int make_chunk(struct chunks *c, int *fd_out, char **mem_out)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_chunk", sizeof(uint32_t), ELEM_BYTES,
				UNWIND_CHUNK_ELEMS, &opts);
	void *p;

	if (fd < 0) {
		fd = -errno;
		pr_err("cannot create an unwind chunk (%zu KiB; %u made): %s\n", CHUNK_BYTES >> 10,
		       c->nr, strerror(-fd));
		return fd;
	}
	p = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		pr_err("cannot map an unwind chunk: %s\n", strerror(-err));
		close(fd);
		return err;
	}
	*fd_out = fd;
	*mem_out = p;
	return 0;
}

/* The kernel's count of a chunk's memory, as fdinfo's memlock says (users' tools read that). */
static uint64_t chunk_memlock(int fd)
{
	char path[64], line[128];
	uint64_t v = CHUNK_BYTES;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lu", &v) == 1)
			break;
	fclose(f);
	return v;
}

struct chunks *chunks__new(const char *name, uint32_t capacity, int *err)
{
	struct chunks *c = calloc(1, sizeof(*c));
	LIBBPF_OPTS(bpf_map_create_opts, opts);

	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	c->fd = -1;
	c->capacity = capacity ? capacity : 1;
	c->nr_max = (c->capacity + UNWIND_CHUNK_ELEMS - 1) / UNWIND_CHUNK_ELEMS;
	c->fds = calloc(c->nr_max, sizeof(*c->fds));
	c->mem = calloc(c->nr_max, sizeof(*c->mem));
	if (!c->fds || !c->mem) {
		*err = -ENOMEM;
		goto out_free;
	}
	/* The first chunk is the outer map's template too. */
	*err = make_chunk(c, &c->fds[0], &c->mem[0]);
	if (*err)
		goto out_free;
	c->chunk_memlock = chunk_memlock(c->fds[0]);
	opts.inner_map_fd = c->fds[0];
	c->fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, name, sizeof(uint32_t), sizeof(uint32_t),
			       c->nr_max, &opts);
	if (c->fd < 0) {
		*err = -errno;
		pr_err("cannot create map %s (%u chunks): %s\n", name, c->nr_max, strerror(-*err));
		c->nr = 1; /* chunk 0 is freed with c */
		goto out_free;
	}
	c->nr = 1;
	if (bpf_map_update_elem(c->fd, &(uint32_t){0}, &c->fds[0], BPF_ANY)) {
		*err = -errno;
		pr_err("cannot publish an unwind chunk: %s\n", strerror(-*err));
		goto out_free;
	}
	return c;

out_free:
	chunks__free(c);
	return NULL;
}

void chunks__free(struct chunks *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nr; i++) {
		munmap(c->mem[i], CHUNK_BYTES);
		close(c->fds[i]);
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c->fds);
	free(c->mem);
	free(c);
}

int chunks__fd(const struct chunks *c)
{
	return c->fd;
}

int chunks__reserve(struct chunks *c, uint32_t end)
{
	uint32_t want = (end + UNWIND_CHUNK_ELEMS - 1) / UNWIND_CHUNK_ELEMS;

	if (end > c->capacity)
		return -E2BIG;
	while (c->nr < want) {
		int fd, err;
		char *mem;

		err = make_chunk(c, &fd, &mem);
		if (err)
			return err;
		/* BPF sees the chunk from here on: it is zeroed, and no file's rows point at it
		 * before the caller writes them. */
		if (bpf_map_update_elem(c->fd, &c->nr, &fd, BPF_ANY)) {
			err = -errno;
			pr_err("cannot publish an unwind chunk: %s\n", strerror(-err));
			munmap(mem, CHUNK_BYTES);
			close(fd);
			return err;
		}
		c->fds[c->nr] = fd;
		__atomic_store_n(&c->mem[c->nr], mem, __ATOMIC_RELEASE);
		c->nr++;
	}
	return 0;
}

void chunks__write(struct chunks *c, uint32_t start, const void *elems, uint32_t n)
{
	const char *src = elems;

	while (n) {
		uint32_t i = start / UNWIND_CHUNK_ELEMS, k = start % UNWIND_CHUNK_ELEMS;
		uint32_t take = UNWIND_CHUNK_ELEMS - k < n ? UNWIND_CHUNK_ELEMS - k : n;

		memcpy(c->mem[i] + (size_t)k * ELEM_BYTES, src, (size_t)take * ELEM_BYTES);
		src += (size_t)take * ELEM_BYTES;
		start += take;
		n -= take;
	}
}

const void *chunks__elem(const struct chunks *c, uint32_t idx)
{
	const char *mem;

	if (idx >= c->capacity)
		return NULL;
	mem = __atomic_load_n(&c->mem[idx / UNWIND_CHUNK_ELEMS], __ATOMIC_ACQUIRE);
	return mem ? mem + (size_t)(idx % UNWIND_CHUNK_ELEMS) * ELEM_BYTES : NULL;
}

uint32_t chunks__made(const struct chunks *c)
{
	return c->nr;
}

uint64_t chunks__bytes(const struct chunks *c)
{
	return (uint64_t)c->nr * c->chunk_memlock;
}
