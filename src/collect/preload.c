// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "preload: " fmt

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "preload.h"

/*
 * Bytes read at once. A record is at most 80 bytes and the shim's stack_max (at most a quarter
 * of its ring, and autoprof refuses rings whose records could exceed this), so one always fits.
 */
#define CHUNK (1u << 20)
#define REC_HDR sizeof(struct autoprof_preload_rec)

struct preload_ring {
	uint32_t pid;
	int fd; /* /proc/PID/mem, read-write */
	uint64_t rec_addr, ring_addr, size;
	uint64_t tail; /* ours; the shim's copy is written after each step */
	uint8_t *buf;  /* CHUNK bytes */
	struct preload_ring_stats st;
};

#define DATA_OFF offsetof(struct autoprof_preload_ring, data)

/* A process gone (its memory with it) reads as 0 bytes or EIO. */
static int mem_io(struct preload_ring *r, void *p, size_t n, uint64_t addr, bool write)
{
	ssize_t k = write ? pwrite(r->fd, p, n, (off_t)addr) : pread(r->fd, p, n, (off_t)addr);

	if (k == (ssize_t)n)
		return 0;
	if (k < 0 && errno != EIO && errno != ESRCH)
		return -errno;
	return -ESRCH;
}

static int write_u64(struct preload_ring *r, uint64_t addr, uint64_t v)
{
	return mem_io(r, &v, sizeof(v), addr, true);
}

struct preload_ring *preload_ring__open(uint32_t pid, uint64_t record_addr, int *err)
{
	struct preload_ring *r = calloc(1, sizeof(*r));
	struct autoprof_preload rec;
	uint64_t head;
	char path[64];

	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	r->pid = pid;
	r->rec_addr = record_addr;
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	r->fd = open(path, O_RDWR | O_CLOEXEC);
	if (r->fd < 0) {
		*err = errno == ENOENT ? -ESRCH : -errno;
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
	/* A version 1 shim (markers, no ring) or a ring whose records might not fit a chunk. */
	if (rec.version < 2 || rec.ring_size < 4096 ||
	    (rec.ring_size & (rec.ring_size - 1)) || rec.stack_max + REC_HDR > CHUNK) {
		*err = -EPROTO;
		goto out_close;
	}
	r->ring_addr = rec.ring;
	r->size = rec.ring_size;
	r->buf = malloc(CHUNK);
	if (!r->buf) {
		*err = -ENOMEM;
		goto out_close;
	}
	/* What is there was written for no one (or a reader before us): start at its head. */
	*err = mem_io(r, &head, sizeof(head), r->ring_addr + offsetof(struct autoprof_preload_ring,
								     head),
		      false);
	if (!*err)
		*err = write_u64(r, r->ring_addr + offsetof(struct autoprof_preload_ring, tail),
				 head);
	if (!*err)
		*err = write_u64(r, record_addr + offsetof(struct autoprof_preload, consumer),
				 (uint64_t)getpid());
	if (*err)
		goto out_buf;
	r->tail = head;
	return r;

out_buf:
	free(r->buf);
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
	close(r->fd);
	free(r->buf);
	free(r);
}

long preload_ring__parse(const uint8_t *buf, size_t len, uint64_t pos, preload_rec_fn fn,
			 void *arg)
{
	size_t at = 0;

	while (len - at >= AUTOPROF_REC_ALIGN) {
		const struct autoprof_preload_rec *rec = (const void *)(buf + at);
		uint32_t n;

		if (rec->commit != pos + at + 1)
			break;
		n = rec->len;
		if (n < AUTOPROF_REC_ALIGN || n % AUTOPROF_REC_ALIGN || n > CHUNK)
			return -EBADMSG;
		if (n > len - at)
			break; /* committed, but only its start was read */
		if (rec->type == AUTOPROF_REC_ALLOC || rec->type == AUTOPROF_REC_FREE) {
			if (n < REC_HDR)
				return -EBADMSG;
			if (rec->type == AUTOPROF_REC_ALLOC && rec->stack_len > n - REC_HDR)
				return -EBADMSG;
			if (fn)
				fn(arg, rec, rec + 1);
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

/* Whether the record at buf's start (at least a header's start there) is committed for pos. */
static bool rec_committed(const uint8_t *buf, uint64_t pos)
{
	return ((const struct autoprof_preload_rec *)buf)->commit == pos + 1;
}

int preload_ring__drain(struct preload_ring *r, preload_rec_fn fn, void *arg)
{
	struct counting c = { fn, arg, 0 };
	uint64_t head, start = r->tail;
	struct autoprof_preload rec;
	int err;

	/* At most one ring's worth a call: a busy process must not hold the ingest thread. */
	while (r->tail - start < r->size) {
		uint64_t off = r->tail & (r->size - 1), n;
		long whole;

		err = mem_io(r, &head, sizeof(head),
			     r->ring_addr + offsetof(struct autoprof_preload_ring, head), false);
		if (err)
			return err;
		if (head == r->tail)
			break;
		if (head - r->tail > r->size) {
			whole = -EBADMSG;
			goto malformed;
		}
		n = head - r->tail;
		n = n < r->size - off ? n : r->size - off;
		n = n < CHUNK ? n : CHUNK;
		/*
		 * Twice: the first read finds the records already committed, the second reads
		 * them whole. One read alone could see a commit word and, copied before it in
		 * the same read, the bytes the writer stored before committing.
		 */
		err = mem_io(r, r->buf, n, r->ring_addr + DATA_OFF + off, false);
		if (err)
			return err;
		whole = preload_ring__parse(r->buf, n, r->tail, NULL, NULL);
		if (whole <= 0) {
			/*
			 * Nothing committed at tail yet, or what no shim writes: a committed record
			 * running past head or past the ring's end (n fell short of a chunk for
			 * one of them), or less than a header's room before head. Either would
			 * stop the ring here for good.
			 */
			if (!whole && (n >= CHUNK || (n >= AUTOPROF_REC_ALIGN &&
						      !rec_committed(r->buf, r->tail))))
				break;
			goto malformed;
		}
		err = mem_io(r, r->buf, (size_t)whole, r->ring_addr + DATA_OFF + off, false);
		if (err)
			return err;
		whole = preload_ring__parse(r->buf, (size_t)whole, r->tail, count_rec, &c);
		if (whole <= 0) {
			if (!whole)
				break;
			goto malformed;
		}
		r->tail += (uint64_t)whole;
		r->st.bytes += (uint64_t)whole;
		err = write_u64(r, r->ring_addr + offsetof(struct autoprof_preload_ring, tail),
				r->tail);
		if (err)
			return err;
		if ((uint64_t)whole < n)
			break;
	}
	goto out;

malformed:
	/* Nothing after a record of impossible length can be found: skip to the head. */
	r->st.malformed++;
	pr_debug("pid %u: malformed ring at %" PRIu64 ", skipped to %" PRIu64 "\n", r->pid,
		 r->tail, head);
	r->tail = head;
	err = write_u64(r, r->ring_addr + offsetof(struct autoprof_preload_ring, tail), r->tail);
	if (err)
		return err;
out:
	r->st.records += c.n;
	if (!mem_io(r, &rec, sizeof(rec), r->rec_addr, false)) {
		r->st.dropped = rec.dropped;
		r->st.stack_cut = rec.stack_cut;
	}
	return (int)c.n;
}

void preload_ring__stats(const struct preload_ring *r, struct preload_ring_stats *out)
{
	*out = r->st;
}
