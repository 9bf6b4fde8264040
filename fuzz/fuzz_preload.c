// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what autoprof reads out of a preload process (bytes the process
 * controls): the ring parser and drain (src/memory/preload.c) and the walk of each
 * allocation's stack copy (src/unwind/walk_copy.c, bpf/unwind_step.h).
 *   make fuzz-preload                   (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_preload  replays fuzz/corpus/preload/ as an ordinary test
 *
 * An input (fuzz/fuzz_preload.h) is a struct fuzz_hdr, the ring's bytes from position hdr.pos
 * on, and hdr.tab_len bytes at the end that describe unwind tables. Each ALLOC record's stack is
 * walked by frame pointers alone (no unwinder: proc NULL, and a proc, which is then ignored),
 * checked frame by frame against a model of that walk, and, when the input has tables, again
 * through them (this file stands in for the unwinder: unwinder__tables gives walk_copy.c arrays
 * made from the input as they are mapped, sized exactly; the process's table may claim
 * more mappings than it has, slots and indexes may point anywhere). With FUZZ_DRAIN the bytes
 * are also laid into a ring in this process (a sealed memfd, as the shim makes it) and drained
 * by preload_ring__drain, which maps it through /proc/self/map_files as autoprof maps a
 * process's.
 *
 * Checked (abort on a violation): parse's result is -EBADMSG or a multiple of 16 no larger
 * than the buffer, the same with and without a callback and again over just that prefix
 * (drain parses twice); each record handed over is committed for its position, whole inside
 * the buffer, an ALLOC or a FREE, its stack inside the record, after the previous one; the
 * reason parse gives for stopping (the buffer's end, a record not committed, one committed
 * but cut by the buffer's end) is what the buffer holds there. A walk writes at most max pcs, pcs[0] is the record's pc (+ 1
 * after a signal frame's row), a frame-pointer walk is exactly the model's. A drain hands over
 * records between tail and head, never across the ring's end, moves tail forward to head at
 * most, and leaves the ring empty or at a record not committed yet: never stuck at one that
 * is. Every buffer (ring, stack copy, pcs, tables) is allocated at its exact size, so ASan sees
 * any read or write past one.
 *
 * Seeds (fuzz/corpus/preload/), rewritten by `bash fuzz/gen_preload_corpus.sh`: ring-* are
 * real rings, dumped by fuzz/gen_preload_corpus.c running under the shim (every allocation
 * sampled, 64 KiB ring, 2 KiB stack copies) with their positions; *-tables add a table of the
 * generator's own code (a frame-pointer rule), *-drained are drained too; edge-* and drain-*
 * are made by hand by the same program (--edge): pads, impossible lengths, records cut by the
 * buffer's or the ring's end or running past head, empty and short inputs, garbage, deep and
 * looping frame-pointer chains, torn tables. found-* are inputs the fuzzer found.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/types.h>

#include "src/memory/preload.h"
#include "unwind/chunks.h"
#include "unwind/unwind.h"
#include "unwind/unwind_priv.h"

#include "fuzz/fuzz_preload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REC_HDR sizeof(struct autoprof_preload_rec)

/* ---- a stand-in for the unwinder: walk_copy.c asks it for the mapped arrays ------------------- */

static const struct unwind_tables *cur_tables;

const struct unwind_tables *unwinder__tables(struct unwinder *u)
{
	(void)u;
	return cur_tables;
}

int unwinder__map_fd(struct unwinder *u, const char *name)
{
	(void)u;
	(void)name;
	return -EBADF;
}

/* The rows and page index: the input's elements, at their exact size (chunks.h's stand-in). */
struct chunks {
	const char *elems;
	uint32_t n;
};

const void *chunks__elem(const struct chunks *c, uint32_t idx)
{
	return idx < c->n ? c->elems + (size_t)idx * 8 : NULL;
}

struct tables {
	struct unwind_tables t;
	struct unwind_proc proc;
	struct chunks elems;
	void *files;
};

static void *dup_exact(const uint8_t *p, size_t n)
{
	void *q = malloc(n ? n : 1);

	if (!q)
		abort();
	memcpy(q, p, n);
	return q;
}

/* n elements of size bytes from p, spaced stride bytes apart as in the mapped array. */
static void *spread(const uint8_t *p, uint32_t n, size_t size, size_t stride)
{
	char *q = calloc(n ? n : 1, stride);

	if (!q)
		abort();
	for (uint32_t i = 0; i < n; i++)
		memcpy(q + i * stride, p + i * size, size);
	return q;
}

/* How many of want elements of size bytes the len bytes left hold; p and len move past them. */
static uint32_t take(const uint8_t **p, size_t *len, uint32_t want, size_t size)
{
	uint32_t n = (size_t)want * size <= *len ? want : (uint32_t)(*len / size);

	*p += n * size;
	*len -= n * size;
	return n;
}

static void tables_make(struct tables *tb, const uint8_t *p, size_t len)
{
	const uint8_t *at, *at_rows;
	struct fuzz_tab h;
	uint32_t nmaps, npages, nrows, pairs;
	char *elems;

	memset(tb, 0, sizeof(*tb));
	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	len -= sizeof(h);
	at = p;
	nmaps = take(&p, &len, h.nmaps < UNWIND_MAX_MAPPINGS ? h.nmaps : UNWIND_MAX_MAPPINGS,
		     sizeof(struct unwind_mapping));
	memcpy(tb->proc.maps, at, nmaps * sizeof(struct unwind_mapping));
	/* The count as the process's table says it, mappings or not (a torn table). */
	tb->proc.nr = h.proc_nr;

	at = p;
	tb->t.nfiles = take(&p, &len, h.nfiles, sizeof(struct unwind_file));
	tb->files = spread(at, tb->t.nfiles, sizeof(struct unwind_file), UNWIND_FILE_STRIDE);
	/* One space of 8-byte elements, as the chunks hold it: the page entries two to an
	 * element (an odd count's last element half zero), then the rows. */
	at = p;
	npages = take(&p, &len, h.npages, sizeof(uint32_t));
	pairs = (npages + 1) / 2;
	at_rows = p;
	nrows = take(&p, &len, h.nrows, sizeof(struct unwind_row));
	elems = calloc(pairs + nrows ? pairs + nrows : 1, 8);
	if (!elems)
		abort();
	memcpy(elems, at, (size_t)npages * sizeof(uint32_t));
	memcpy(elems + (size_t)pairs * 8, at_rows, (size_t)nrows * sizeof(struct unwind_row));
	tb->elems = (struct chunks){ elems, pairs + nrows };
	tb->t.elems = &tb->elems;
	tb->t.files = tb->files;
}

static void tables_free(struct tables *tb)
{
	free((void *)tb->elems.elems);
	free(tb->files);
}

/* ---- the checks ----------------------------------------------------------------------------- */

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond))                                                                     \
			abort();                                                                 \
	} while (0)

struct ctx {
	const uint8_t *buf;
	size_t len;
	uint64_t pos;
	uint32_t max;
	struct tables *tables; /* NULL: the input has none */
	size_t end;	       /* where the last record handed over ended */
	uint64_t nrec;
	bool walk;
};

/* The frame-pointer walk as documented: pcs[0] = pc, then [bp + 8] and [bp] while bp is above
 * sp and both words are in the copy; bp 0 ends it (a leaf alone: no info, truncated). */
static bool copy_word(const uint8_t *copy, uint64_t base, uint64_t len, uint64_t addr,
		      uint64_t *v)
{
	if (addr < base || len < 8 || addr - base > len - 8)
		return false;
	memcpy(v, copy + (addr - base), 8);
	return true;
}

static uint32_t model_fp(uint64_t pc, uint64_t sp, uint64_t bp, const uint8_t *copy,
			 uint64_t len, uint64_t *pcs, uint32_t max, bool *truncated)
{
	uint64_t base = sp, ra, nbp;
	uint32_t n = 0;

	for (;;) {
		if (!pc) {
			*truncated = false;
			return n;
		}
		if (n >= max) {
			*truncated = true;
			return n;
		}
		pcs[n++] = pc;
		if (!bp) {
			*truncated = n == 1;
			return n;
		}
		if (bp < sp || !copy_word(copy, base, len, bp + 8, &ra) ||
		    !copy_word(copy, base, len, bp, &nbp)) {
			*truncated = true;
			return n;
		}
		sp = bp + 16;
		bp = nbp;
		pc = ra;
	}
}

static void walk_one(struct ctx *c, const struct autoprof_preload_rec *r, const void *stack)
{
	uint64_t *pcs = malloc(c->max ? c->max * sizeof(*pcs) : 1);
	uint64_t *want = malloc(c->max ? c->max * sizeof(*want) : 1);
	void *copy = dup_exact(stack, r->stack_len);
	bool truncated, want_trunc;
	uint32_t n, nwant;

	CHECK(pcs && want);
	/* Frame pointers only: no unwinder, no process table. */
	n = unwinder__walk_copy(NULL, NULL, r->pc, r->sp, r->bp, copy, r->stack_len, pcs, c->max,
				&truncated);
	nwant = model_fp(r->pc, r->sp, r->bp, copy, r->stack_len, want, c->max, &want_trunc);
	CHECK(n == nwant && truncated == want_trunc);
	CHECK(!n || !memcmp(pcs, want, n * sizeof(*pcs)));
	/* A proc without an unwinder is ignored (frame pointers only, too). */
	n = unwinder__walk_copy(NULL, c->tables ? &c->tables->proc : NULL, r->pc, r->sp, r->bp,
				copy, r->stack_len, pcs, c->max, &truncated);
	CHECK(n == nwant && truncated == want_trunc);

	if (c->tables) {
		cur_tables = &c->tables->t;
		n = unwinder__walk_copy((struct unwinder *)c, &c->tables->proc, r->pc, r->sp, r->bp,
					copy, r->stack_len, pcs, c->max, &truncated);
		cur_tables = NULL;
		CHECK(n <= c->max);
		CHECK(r->pc || !n);
		/* pc + 1 when its row is a signal frame's (the trampoline was returned to). */
		CHECK(!r->pc || !c->max || (n >= 1 && (pcs[0] == r->pc || pcs[0] == r->pc + 1)));
		/*
		 * No mapping at all: the leaf's code is not known yet, so the walk ends at it,
		 * marked truncated, rather than guessing by frame pointers.
		 */
		if (!c->tables->proc.nr && r->pc && c->max)
			CHECK(n == 1 && truncated);
	}
	free(copy);
	free(want);
	free(pcs);
}

/* r is parse's checked copy of the header; stack (right after the header) says where it is. */
static void on_rec(void *arg, const struct autoprof_preload_rec *r, const void *stack)
{
	struct ctx *c = arg;
	const uint8_t *p = (const uint8_t *)stack - REC_HDR;
	struct autoprof_preload_rec in_buf;
	size_t at;

	CHECK(p >= c->buf && p < c->buf + c->len);
	at = (size_t)(p - c->buf);
	CHECK(at % AUTOPROF_REC_ALIGN == 0 && at >= c->end);
	CHECK(r->commit == c->pos + at + 1);
	CHECK(r->len >= REC_HDR && r->len % AUTOPROF_REC_ALIGN == 0 && r->len <= c->len - at);
	CHECK(r->type == AUTOPROF_REC_ALLOC || r->type == AUTOPROF_REC_FREE);
	/* The copy is of the header there (nothing writes this buffer meanwhile); a FREE's stack
	 * length, whatever is there, reads as 0. */
	memcpy(&in_buf, p, sizeof(in_buf));
	if (r->type == AUTOPROF_REC_FREE) {
		CHECK(!r->stack_len);
		in_buf.stack_len = 0;
	}
	CHECK(!memcmp(&in_buf, r, sizeof(in_buf)));
	CHECK(r->stack_len <= r->len - REC_HDR);
	c->end = at + r->len;
	c->nrec++;
	if (c->walk && r->type == AUTOPROF_REC_ALLOC)
		walk_one(c, r, stack);
}

static void fuzz_ring(const uint8_t *buf, size_t len, uint64_t pos, uint32_t max,
		      struct tables *tables)
{
	struct ctx c = { .buf = buf, .len = len, .pos = pos, .max = max, .tables = tables,
			 .walk = true };
	enum preload_parse_stop stop, stop2;
	struct ctx again = c;
	long whole = preload_ring__parse(buf, len, pos, on_rec, &c, &stop);
	const struct autoprof_preload_rec *r = (const void *)(buf + (whole > 0 ? whole : 0));
	size_t left = len - (size_t)(whole > 0 ? whole : 0);

	CHECK(whole == -EBADMSG || (whole >= 0 && (size_t)whole <= len));
	CHECK(preload_ring__parse(buf, len, pos, NULL, NULL, &stop2) == whole);
	if (whole < 0)
		return;
	CHECK(stop2 == stop);
	CHECK(whole % AUTOPROF_REC_ALIGN == 0 && (size_t)whole >= c.end);
	/* It says why it stopped, and the buffer agrees: at its end (no record's start left), at a
	 * record not committed, or at one committed whose length runs past the buffer. */
	switch (stop) {
	case PRELOAD_PARSE_END:
		CHECK(left < AUTOPROF_REC_ALIGN);
		break;
	case PRELOAD_PARSE_PENDING:
		CHECK(left >= AUTOPROF_REC_ALIGN && r->commit != pos + (uint64_t)whole + 1);
		break;
	case PRELOAD_PARSE_CUT:
		CHECK(left >= AUTOPROF_REC_ALIGN && r->commit == pos + (uint64_t)whole + 1);
		CHECK(r->len >= AUTOPROF_REC_ALIGN && r->len % AUTOPROF_REC_ALIGN == 0 &&
		      r->len > left);
		break;
	default:
		CHECK(0);
	}
	/* drain's second pass reads just the whole records again: the same must come out, and
	 * then nothing is left. */
	again.walk = false;
	CHECK(preload_ring__parse(buf, (size_t)whole, pos, on_rec, &again, &stop2) == whole);
	CHECK(again.nrec == c.nrec && again.end == c.end && stop2 == PRELOAD_PARSE_END);
}

/* ---- the drain, through /proc/self/mem ----------------------------------------------------- */

static struct autoprof_preload fake = { .version = AUTOPROF_PRELOAD_VERSION };

struct dctx {
	const uint8_t *data; /* the ring's */
	uint64_t from, head; /* positions the records must lie in */
	uint64_t next;	     /* the lowest position the next record may have */
};

static void on_drained(void *arg, const struct autoprof_preload_rec *r, const void *stack)
{
	struct dctx *d = arg;
	uint64_t at = r->commit - 1;

	CHECK(r->type == AUTOPROF_REC_ALLOC || r->type == AUTOPROF_REC_FREE);
	CHECK(r->len >= REC_HDR && r->len % AUTOPROF_REC_ALIGN == 0);
	CHECK(at - d->from >= d->next - d->from && at - d->from <= d->head - d->from);
	CHECK(r->len <= d->head - at && r->len <= fake.ring_size - (at & (fake.ring_size - 1)));
	/* The drain maps the ring on its own: the same bytes, at another address. */
	CHECK(!memcmp(stack, d->data + (at & (fake.ring_size - 1)) + REC_HDR, r->stack_len));
	CHECK(r->stack_len <= r->len - REC_HDR && (r->type == AUTOPROF_REC_ALLOC || !r->stack_len));
	d->next = at + r->len;
}

/* The ring as the shim makes it: a memfd sealed against shrinking, mapped shared. */
static struct autoprof_preload_ring *ring_make(uint64_t size, size_t *map_len)
{
	int fd = memfd_create("fuzz-preload-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p = MAP_FAILED;

	*map_len = sizeof(struct autoprof_preload_ring) + size;
	if (fd >= 0 && !ftruncate(fd, (off_t)*map_len) &&
	    !fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		p = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	CHECK(p != MAP_FAILED);
	return p;
}

/*
 * Drains until nothing moves (a drain takes one ring's worth at most). Then the ring is empty
 * or waits at a record not committed yet: never stuck at one that is (autoprof would wait for
 * it forever).
 */
static void fuzz_drain(const uint8_t *buf, size_t len, uint64_t pos, uint32_t head_add)
{
	uint64_t size = 4096, tail;
	struct autoprof_preload_ring *r;
	struct preload_ring *pr;
	size_t map_len;
	struct dctx d;
	int err, i;

	while (size < len)
		size *= 2;
	r = ring_make(size, &map_len);
	for (size_t k = 0; k < len; k++)
		r->data[(pos + k) & (size - 1)] = buf[k];
	r->head = r->tail = pos;
	fake.ring = (uintptr_t)r;
	fake.ring_size = size;
	pr = preload_ring__open((uint32_t)getpid(), (uintptr_t)&fake, &err);
	CHECK(pr && r->tail == pos);
	r->head = pos + (head_add ? head_add : len);
	d = (struct dctx){ .data = r->data, .from = pos, .head = r->head, .next = pos };
	for (i = 0; i < 8; i++) {
		tail = r->tail;
		CHECK(preload_ring__drain(pr, on_drained, &d) >= 0);
		/* Forward, at most to head; d.next: the records handed over are behind it. */
		CHECK(r->tail - pos <= r->head - pos && r->tail - tail <= r->head - tail);
		if (r->tail == tail)
			break;
		d.from = d.next = r->tail;
	}
	CHECK(i < 8);
	if (r->tail != r->head) {
		uint64_t commit;

		/* A process may set any head, so tail (its head when opened) may be unaligned. */
		memcpy(&commit, r->data + (r->tail & (size - 1)), sizeof(commit));
		CHECK(r->head - r->tail >= AUTOPROF_REC_ALIGN &&
		      size - (r->tail & (size - 1)) >= AUTOPROF_REC_ALIGN);
		CHECK(commit != r->tail + 1);
	}
	preload_ring__close(pr);
	CHECK(!fake.consumer);
	munmap(r, map_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_hdr h = {};
	struct tables tb, *tables = NULL;
	size_t tab_len = 0;
	uint8_t *ring;
	uint32_t max;

	/* Whatever the header holds: a short input is a ring of what is there at position 0. */
	if (size >= sizeof(h)) {
		memcpy(&h, data, sizeof(h));
		data += sizeof(h);
		size -= sizeof(h);
		tab_len = h.tab_len <= size ? h.tab_len : size;
	}
	max = h.max < UNWIND_MAX_FRAMES ? h.max : UNWIND_MAX_FRAMES;
	if (tab_len >= sizeof(struct fuzz_tab)) {
		tables_make(&tb, data + size - tab_len, tab_len);
		tables = &tb;
	}
	/* The ring's bytes in a buffer of their exact size, aligned as autoprof's is. */
	ring = dup_exact(data, size - tab_len);
	fuzz_ring(ring, size - tab_len, h.pos, max, tables);
	if (h.flags & FUZZ_DRAIN)
		fuzz_drain(ring, size - tab_len, h.pos, h.head);
	free(ring);
	if (tables)
		tables_free(tables);
	return 0;
}
