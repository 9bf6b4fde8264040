// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "preload: " fmt

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/procmem.h"
#include "memory/preload.h"

/*
 * The longest record autoprof takes: the header and a stack copy of the shim's stack_max, which
 * it keeps to at most 512 KiB (a ring allowing more is refused).
 */
#define MAX_REC (1u << 20)
#define REC_HDR sizeof(struct autoprof_preload_rec)

struct preload_ring {
	uint32_t pid;
	int fd; /* /proc/PID/mem: the record (consumer, counts) */
	uint64_t rec_addr, size;
	struct autoprof_preload_ring *ring; /* the shim's pages, mapped here too */
	size_t map_len;
	uint64_t tail; /* ours; published to the shim after each step */
	bool broken;   /* its head was set where no record can start: not read again */
	struct preload_ring_stats st;
};

/* A process gone (its memory with it) reads as 0 bytes or EIO: both are -ESRCH here. */
static int mem_io(struct preload_ring *r, void *p, size_t n, uint64_t addr, bool write)
{
	int err = write ? procmem__write(r->fd, addr, p, n) : procmem__read(r->fd, addr, p, n);

	return err == -EIO ? -ESRCH : err;
}

static int write_u64(struct preload_ring *r, uint64_t addr, uint64_t v)
{
	return mem_io(r, &v, sizeof(v), addr, true);
}

/*
 * Maps the ring's memfd, found through the process's mapping at addr. Only a memfd sealed
 * against shrinking is mapped: the process could otherwise truncate it and make our reads
 * fault.
 */
static int map_ring(struct preload_ring *r, uint64_t addr)
{
	uint64_t end = addr + ((r->map_len + 4095) & ~4095ul);
	struct stat st;
	char path[96];
	void *p;
	int fd, seals, err = 0;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, r->pid, addr, end);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EPROTO : -errno;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) ||
	    (uint64_t)st.st_size < r->map_len) {
		err = -EPROTO;
		goto out_close;
	}
	p = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto out_close;
	}
	r->ring = p;
out_close:
	close(fd);
	return err;
}

struct preload_ring *preload_ring__open(uint32_t pid, uint64_t record_addr, int *err)
{
	struct preload_ring *r = calloc(1, sizeof(*r));
	struct autoprof_preload rec;

	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	r->pid = pid;
	r->rec_addr = record_addr;
	/* Writable: the record's consumer field tells the shim who reads its ring. */
	r->fd = procmem__open_rw(pid);
	if (r->fd < 0) {
		*err = r->fd == -ENOENT ? -ESRCH : r->fd;
		goto out_free;
	}
	*err = mem_io(r, &rec, sizeof(rec), record_addr, false);
	if (*err)
		goto out_close;
	/* The library is mapped before its constructor makes the ring. */
	if (rec.version >= 2 && !rec.ring) {
		*err = -EAGAIN;
		goto out_close;
	}
	/* A version 1 shim (markers, no ring) or a ring whose records might be too long. */
	if (rec.version < 2 || rec.ring_size < 4096 || rec.ring_size > (1ull << 30) ||
	    (rec.ring_size & (rec.ring_size - 1)) || rec.stack_max + REC_HDR > MAX_REC) {
		*err = -EPROTO;
		goto out_close;
	}
	r->size = rec.ring_size;
	r->map_len = sizeof(*r->ring) + r->size;
	*err = map_ring(r, rec.ring);
	if (*err)
		goto out_close;
	/* What is there was written for no one (or a reader before us): start at its head. */
	r->tail = __atomic_load_n(&r->ring->head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&r->ring->tail, r->tail, __ATOMIC_RELEASE);
	*err = write_u64(r, record_addr + offsetof(struct autoprof_preload, consumer),
			 (uint64_t)getpid());
	if (*err)
		goto out_unmap;
	return r;

out_unmap:
	munmap(r->ring, r->map_len);
out_close:
	close(r->fd);
out_free:
	free(r);
	return NULL;
}

void preload_ring__close(struct preload_ring *r)
{
	if (!r)
		return;
	/* The process may be gone or exec'd: nothing to tell then. */
	write_u64(r, r->rec_addr + offsetof(struct autoprof_preload, consumer), 0);
	munmap(r->ring, r->map_len);
	close(r->fd);
	free(r);
}

long preload_ring__parse(const uint8_t *buf, size_t len, uint64_t pos, preload_rec_fn fn,
			 void *arg, enum preload_parse_stop *stop)
{
	size_t at = 0;

	*stop = PRELOAD_PARSE_END;
	while (len - at >= AUTOPROF_REC_ALIGN) {
		const struct autoprof_preload_rec *p = (const void *)(buf + at);
		struct autoprof_preload_rec rec;
		uint32_t n;

		/* The commit word first: what the writer stored before it is then in place. */
		if (__atomic_load_n(&p->commit, __ATOMIC_ACQUIRE) != pos + at + 1) {
			*stop = PRELOAD_PARSE_PENDING;
			break;
		}
		/* A copy: the process may still write the ring, and what was checked must stay. */
		memcpy(&rec, p, len - at < REC_HDR ? AUTOPROF_REC_ALIGN : REC_HDR);
		n = rec.len;
		if (n < AUTOPROF_REC_ALIGN || n % AUTOPROF_REC_ALIGN || n > MAX_REC)
			return -EBADMSG;
		if (n > len - at) {
			*stop = PRELOAD_PARSE_CUT;
			break;
		}
		if (rec.type == AUTOPROF_REC_ALLOC || rec.type == AUTOPROF_REC_FREE) {
			if (n < REC_HDR)
				return -EBADMSG;
			if (rec.type == AUTOPROF_REC_ALLOC && rec.stack_len > n - REC_HDR)
				return -EBADMSG;
			if (rec.type == AUTOPROF_REC_FREE)
				rec.stack_len = 0;
			if (fn)
				fn(arg, &rec, p + 1);
		}
		/* Pads and types from a newer shim are stepped over. */
		at += n;
	}
	return (long)at;
}

/* Counts what a drain step passes to fn besides the pads. */
struct counting {
	preload_rec_fn fn;
	void *arg;
	uint64_t n;
};

static void count_rec(void *arg, const struct autoprof_preload_rec *rec, const void *stack)
{
	struct counting *c = arg;

	c->n++;
	c->fn(c->arg, rec, stack);
}

int preload_ring__drain(struct preload_ring *r, preload_rec_fn fn, void *arg)
{
	struct counting c = { fn, arg, 0 };
	uint64_t head = 0, start = r->tail;
	enum preload_parse_stop stop;
	struct autoprof_preload rec;
	long whole = 0;

	if (r->broken)
		return 0;
	/* At most one ring's worth a call: a busy process must not hold the ingest thread. */
	while (r->tail - start < r->size) {
		uint64_t off = r->tail & (r->size - 1), n;

		head = __atomic_load_n(&r->ring->head, __ATOMIC_ACQUIRE);
		if (head == r->tail)
			break;
		/* tail too: it starts at the head the process had when we opened its ring. */
		if (head - r->tail > r->size || (head | r->tail) % AUTOPROF_REC_ALIGN) {
			whole = -EBADMSG;
			break;
		}
		n = head - r->tail;
		n = n < r->size - off ? n : r->size - off;
		whole = preload_ring__parse(r->ring->data + off, n, r->tail, count_rec, &c, &stop);
		/*
		 * Nothing whole at tail, and its record is committed but runs past head or the
		 * ring's end: no shim writes that, and it would stop the ring here for good. (Cut
		 * after whole records, it is at tail next time.)
		 */
		if (!whole && stop == PRELOAD_PARSE_CUT)
			whole = -EBADMSG;
		if (whole <= 0)
			break;
		r->tail += (uint64_t)whole;
		r->st.bytes += (uint64_t)whole;
		__atomic_store_n(&r->ring->tail, r->tail, __ATOMIC_RELEASE);
		if ((uint64_t)whole < n)
			break;
	}
	if (whole < 0) {
		/* Nothing after a record of impossible length can be found: skip to the head. */
		r->st.malformed++;
		pr_debug("pid %u: malformed ring at %" PRIu64 ", skipped to %" PRIu64 "\n", r->pid,
			 r->tail, head);
		r->tail = head;
		__atomic_store_n(&r->ring->tail, r->tail, __ATOMIC_RELEASE);
		r->broken = head % AUTOPROF_REC_ALIGN != 0;
	}
	r->st.records += c.n;
	if (mem_io(r, &rec, sizeof(rec), r->rec_addr, false))
		return c.n ? (int)c.n : -ESRCH;
	r->st.dropped = rec.dropped;
	r->st.stack_cut = rec.stack_cut;
	return (int)c.n;
}

void preload_ring__add_stats(const struct preload_ring *r, struct preload_ring_stats *sum)
{
	sum->records += r->st.records;
	sum->bytes += r->st.bytes;
	sum->dropped += r->st.dropped;
	sum->stack_cut += r->st.stack_cut;
	sum->malformed += r->st.malformed;
}
