// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes fuzz/fuzz_preload.c's seeds (layout: fuzz/fuzz_preload.h) into DIR:
 *   gen_preload_corpus DIR           under libautoprof_preload.so: real rings (ring-*). It plays
 *                                    autoprof's part itself: turns the shim's consumer on,
 *                                    allocates and frees through a few call chains, and dumps
 *                                    [tail, head) of the ring with its position, up to the
 *                                    ring's end, then gives the room back.
 *   gen_preload_corpus --edge DIR    hand-made edge cases (edge-*), no shim needed
 * fuzz/gen_preload_corpus.sh builds and runs both.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/types.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/unwind_abi.h"
#include "fuzz/fuzz_preload.h"
#include "preload/autoprof_preload.h"

#define REC_HDR sizeof(struct autoprof_preload_rec)

static const char *outdir;
static int failed;

/* Tables appended to a seed: a struct fuzz_tab and its arrays, packed. */
struct tab {
	uint8_t b[4096];
	size_t len;
};

static void put(struct tab *t, const void *p, size_t n)
{
	if (t->len + n > sizeof(t->b))
		abort();
	memcpy(t->b + t->len, p, n);
	t->len += n;
}

static void seed_hdr(const char *name, struct fuzz_hdr h, const void *ring, size_t n,
		     const struct tab *tab)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(&h, sizeof(h), 1, f) != 1 || (n && fwrite(ring, n, 1, f) != 1) ||
	    (tab && tab->len && fwrite(tab->b, tab->len, 1, f) != 1) || fclose(f)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		failed = 1;
		return;
	}
	printf("%-28s pos %8" PRIu64 " ring bytes %6zu tables %4zu%s\n", name, h.pos, n,
	       tab ? tab->len : 0, h.flags & FUZZ_DRAIN ? " drained" : "");
}

static void seed(const char *name, uint64_t pos, uint8_t max, const void *ring, size_t n,
		 const struct tab *tab)
{
	struct fuzz_hdr h = { .pos = pos, .max = max, .tab_len = tab ? (uint16_t)tab->len : 0 };

	seed_hdr(name, h, ring, n, tab);
}

/* Drained too, with head at pos + head_add (0: the bytes' end). */
static void seed_drain(const char *name, uint64_t pos, uint32_t head_add, const void *ring,
		       size_t n)
{
	struct fuzz_hdr h = { .pos = pos, .max = UNWIND_MAX_FRAMES, .flags = FUZZ_DRAIN,
			      .head = head_add };

	seed_hdr(name, h, ring, n, NULL);
}

/* ---- real rings ----------------------------------------------------------------------------- */

static struct autoprof_preload *rec;
static struct autoprof_preload_ring *ring;

static void consume(int on)
{
	__atomic_store_n(&rec->consumer, on ? (uint64_t)getpid() : 0, __ATOMIC_SEQ_CST);
}

/*
 * Dumps [tail, head) up to the ring's end as seed name (with tab too, when given, as
 * name-tables) and gives that room back (name NULL: all of [tail, head)). The shim must be
 * quiet: the caller turned the consumer off. Returns the bytes dumped.
 */
static int drain; /* dump() writes a drained variant too */

static size_t dump(const char *name, const struct tab *tab)
{
	uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE), tail = ring->tail;
	uint64_t size = rec->ring_size, off = tail & (size - 1);
	size_t n = head - tail < size - off ? head - tail : size - off;
	char tname[256];

	if (name) {
		seed(name, tail, UNWIND_MAX_FRAMES, ring->data + off, n, NULL);
		if (drain) {
			snprintf(tname, sizeof(tname), "%s-drained", name);
			seed_drain(tname, tail, 0, ring->data + off, n);
		}
		if (tab) {
			snprintf(tname, sizeof(tname), "%s-tables", name);
			seed(tname, tail, UNWIND_MAX_FRAMES, ring->data + off, n, tab);
		}
	}
	__atomic_store_n(&ring->tail, name ? tail + n : head, __ATOMIC_RELEASE);
	return n;
}

/* Calls the allocator through a few frames of our own, so that the copies hold a chain. */
static volatile void *sink;

static __attribute__((noinline)) void *leaf_alloc(int kind, size_t n)
{
	void *p;

	switch (kind) {
	case 0:
		p = malloc(n);
		break;
	case 1:
		p = calloc(1, n);
		break;
	default:
		p = realloc(NULL, n);
		break;
	}
	sink = p;
	return p;
}

static __attribute__((noinline)) void *mid_alloc(int kind, size_t n)
{
	void *p = leaf_alloc(kind, n);

	__asm__ volatile("" ::: "memory");
	return p;
}

static __attribute__((noinline)) void *top_alloc(int kind, size_t n)
{
	void *p = mid_alloc(kind, n + 1);

	__asm__ volatile("" ::: "memory");
	return p;
}

/* Deep enough that the copy is cut at the shim's stack_max. */
static __attribute__((noinline)) void *deep_alloc(int depth)
{
	volatile char pad[48];
	void *p;

	pad[0] = (char)depth;
	p = depth ? deep_alloc(depth - 1) : malloc(64);
	__asm__ volatile("" ::: "memory");
	return (void *)((uintptr_t)p + pad[0] * 0);
}

static void *thread_main(void *arg)
{
	void *a = top_alloc(0, 200), *b = top_alloc(1, 3000);

	(void)arg;
	free(a);
	b = realloc(b, 9000);
	free(b);
	return NULL;
}

/*
 * The generator's own code in the process's table, one file with a frame-pointer rule all
 * over it (what -fno-omit-frame-pointer code follows: cfa = rbp + 16, rbp saved at cfa - 16),
 * so that the walks go through the rows, not around them.
 */
/* The executable mapping of our own file: its start, end and file offset. */
static int self_text(uint64_t *start, uint64_t *end, uint64_t *off)
{
	char line[4096], exe[4096], path[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");
	int err = -1;

	if (k <= 0 || !f) {
		if (f)
			fclose(f);
		return -1;
	}
	exe[k] = 0;
	while (err && fgets(line, sizeof(line), f)) {
		char perms[8];

		path[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s", start,
			   end, perms, off, path) >= 4 &&
		    perms[2] == 'x' && !strcmp(path, exe))
			err = 0;
	}
	fclose(f);
	return err;
}

static int self_tables(struct tab *t)
{
	struct unwind_mapping m = { .file = 0 };
	struct unwind_file file = { .row_count = 2, .page_start = 0 };
	struct unwind_row rows[2];
	struct fuzz_tab h = { .proc_nr = 1, .nmaps = 1, .nfiles = 1, .nrows = 2 };
	uint64_t start, end, off;
	__u32 first, last;

	if (self_text(&start, &end, &off))
		return -1;
	m.start = start;
	m.len = (__u32)(end - start);
	m.file_off = (__u32)off;
	first = (__u32)off;
	last = (__u32)(off + (end - start));
	file.first_page = first >> UNWIND_PAGE_SHIFT;
	file.page_count = (last >> UNWIND_PAGE_SHIFT) - file.first_page + 1;
	h.npages = file.page_count;
	/* The rows follow the page entries in the elements (fuzz/fuzz_preload.h). */
	file.row_start = (file.page_count + 1) / 2;
	rows[0] = (struct unwind_row){ first,
				       UNWIND_ROW_RULE(UNWIND_CFA_RBP, 16, UNWIND_RBP_OFFSET, -16) };
	rows[1] = (struct unwind_row){ last, UNWIND_ROW_RULE(UNWIND_CFA_NONE, 0, UNWIND_RBP_SAME, 0) };

	t->len = 0;
	put(t, &h, sizeof(h));
	put(t, &m, sizeof(m));
	put(t, &file, sizeof(file));
	/* Each page's first byte is under row 0 until the page holding the last row. */
	for (__u32 p = 0; p < file.page_count; p++) {
		__u32 row = file.row_start + (((file.first_page + p) << UNWIND_PAGE_SHIFT) >= last);

		put(t, &row, sizeof(row));
	}
	put(t, rows, sizeof(rows));
	return 0;
}

static int real_rings(void)
{
	void *p[8];
	static struct tab tab;
	pthread_t th;
	int i, have_tab;

	rec = dlsym(RTLD_DEFAULT, "autoprof_preload_v1");
	if (!rec || rec->version != AUTOPROF_PRELOAD_VERSION || !rec->ring) {
		fprintf(stderr, "run under LD_PRELOAD=.../libautoprof_preload.so (version %d)\n",
			AUTOPROF_PRELOAD_VERSION);
		return 1;
	}
	ring = (struct autoprof_preload_ring *)(uintptr_t)rec->ring;
	have_tab = !self_tables(&tab);
	/* Whatever was written before (nothing: no consumer yet) is not ours. */
	dump(NULL, NULL);

	consume(1);
	for (i = 0; i < 6; i++)
		p[i] = top_alloc(i % 3, 16u << i);
	for (i = 0; i < 6; i += 2)
		free(p[i]);
	consume(0);
	drain = 1;
	dump("ring-alloc-free", have_tab ? &tab : NULL);
	drain = 0;

	consume(1);
	p[0] = top_alloc(0, 100);
	p[0] = realloc(p[0], 100000);
	free(p[0]);
	for (i = 1; i < 6; i += 2)
		free(p[i]);
	consume(0);
	dump("ring-realloc-frees", NULL);

	consume(1);
	if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, NULL))
		return 1;
	consume(0);
	dump("ring-thread", have_tab ? &tab : NULL);

	consume(1);
	free(deep_alloc(100));
	consume(0);
	dump("ring-stack-cut", have_tab ? &tab : NULL);

	/* Round the ring until a record no longer fits before its end: a pad fills the rest. */
	for (;;) {
		uint64_t size = rec->ring_size, head = ring->head;

		if ((head & (size - 1)) > size - 4096)
			break;
		consume(1);
		free(top_alloc(0, 32));
		consume(0);
		dump(NULL, NULL);
	}
	{
		uint64_t size = rec->ring_size, start = ring->tail;

		consume(1);
		while (ring->head / size == start / size)
			free(top_alloc(1, 48));
		consume(0);
		drain = 1;
		dump("ring-wrap-end", NULL);
		drain = 0;
		dump("ring-wrap-start", have_tab ? &tab : NULL);
	}
	return 0;
}

/* ---- hand-made ------------------------------------------------------------------------------ */

static uint8_t buf[8192] __attribute__((aligned(16)));
static size_t at;

static struct autoprof_preload_rec *add(uint64_t pos, uint32_t type, uint32_t len,
					uint32_t stack_len)
{
	struct autoprof_preload_rec *r = (void *)(buf + at);
	/* A length past the buffer is the point of some: only the header is written then. */
	size_t n = len > REC_HDR && len <= sizeof(buf) - at ? len : REC_HDR;

	memset(r, 0, n);
	r->commit = pos + at + 1;
	r->type = type;
	r->len = len;
	r->ptr = 0x5555deadbe00 + at;
	r->size = 64;
	r->mean = 1;
	r->tid = 4242;
	r->stack_len = stack_len;
	at += n;
	return r;
}

/* An ALLOC record whose copy is a frame-pointer chain of nframes frames from sp (each frame:
 * saved rbp, return address, 16 bytes of locals). */
static void add_chain(uint64_t pos, uint64_t sp, int nframes, int loop)
{
	uint32_t stack_len = (uint32_t)nframes * 32;
	struct autoprof_preload_rec *r;
	uint64_t *w;

	r = add(pos, AUTOPROF_REC_ALLOC, REC_HDR + stack_len, stack_len);
	w = (uint64_t *)(r + 1);

	r->pc = 0x401000;
	r->sp = sp;
	r->bp = sp + 16;
	for (int i = 0; i < nframes; i++) {
		uint64_t bp = sp + 32 * i + 16;

		w[(bp - sp) / 8] = loop ? bp : (i + 1 < nframes ? bp + 32 : 0);
		w[(bp - sp) / 8 + 1] = 0x401000 + 0x10 * (i + 1);
	}
}

static void edge(void)
{
	const uint64_t sp = 0x7ffc00001000;
	struct tab t = { .len = 0 };
	uint64_t pos, rnd = 88172645463325252ull;

	/* Nothing at all; a header and no ring; an input shorter than a header. */
	seed("edge-no-ring", 0, 127, NULL, 0, NULL);
	{
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/edge-short", outdir);
		f = fopen(path, "wb");
		if (!f || fwrite("\x01\x00\x00\x00\x00\x00\x00", 7, 1, f) != 1 || fclose(f))
			failed = 1;
		snprintf(path, sizeof(path), "%s/edge-empty", outdir);
		f = fopen(path, "wb");
		if (!f || fclose(f))
			failed = 1;
	}

	/* A free, then a pad to the ring's end (as the shim leaves one). */
	pos = (1u << 16) - 256;
	at = 0;
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	add(pos, AUTOPROF_REC_PAD, 256 - REC_HDR, 0);
	seed("edge-pad-end", pos, 127, buf, at, NULL);

	/* Committed records of impossible length: not aligned, past any chunk, shorter than a
	 * header, a stack longer than the record. */
	pos = 4096;
	at = 0;
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	add(pos, AUTOPROF_REC_FREE, REC_HDR + 8, 0);
	seed("edge-len-unaligned", pos, 127, buf, at, NULL);
	at = 0;
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	add(pos, AUTOPROF_REC_ALLOC, 0x80000000u, 0);
	seed("edge-len-huge", pos, 127, buf, at, NULL);
	at = 0;
	add(pos, AUTOPROF_REC_ALLOC, 32, 0);
	seed("edge-len-short", pos, 127, buf, REC_HDR, NULL);
	at = 0;
	add(pos, AUTOPROF_REC_ALLOC, REC_HDR + 64, 65);
	seed("edge-stack-past-record", pos, 127, buf, at, NULL);

	/* A committed record of which only the start is in the buffer. */
	at = 0;
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	add_chain(pos, sp, 8, 0);
	seed("edge-straddle-end", pos, 127, buf, at - 100, NULL);

	/* Drained: an allocation committed across the ring's end (4096 bytes when drained),
	 * committed past head, a head less than a header past tail, a head more than a ring
	 * past tail. */
	pos = 2 * 4096 - 256;
	at = 0;
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	add_chain(pos, sp, 8, 0);
	seed_drain("drain-straddle-end", pos, 0, buf, at);
	seed_drain("drain-past-head", pos, REC_HDR + 64, buf, at);
	seed_drain("drain-head-unaligned", pos, REC_HDR + 8, buf, at);
	seed_drain("drain-head-far", pos, 1u << 20, buf, at);
	/* Opened at an unaligned head (the process's to set), then an aligned one. */
	seed_drain("drain-tail-unaligned", pos + 4, 2 * REC_HDR - 4, buf, at);
	at = 0;
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	add(pos, AUTOPROF_REC_PAD, 256 - REC_HDR, 0);
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	memset(buf + at, 0, REC_HDR);
	seed_drain("drain-pad-wrap-uncommitted", pos, at + REC_HDR, buf, at + REC_HDR);
	pos = 4096;

	/* Not committed: the word names another position; then one never written. */
	at = 0;
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	add(pos + 16, AUTOPROF_REC_FREE, REC_HDR, 0);
	memset(buf + at, 0, 256);
	seed("edge-uncommitted", pos, 127, buf, at + 256, NULL);

	/* A type from a newer shim is stepped over. */
	at = 0;
	add(pos, 99, 48, 0);
	add(pos, AUTOPROF_REC_FREE, REC_HDR, 0);
	seed("edge-unknown-type", pos, 127, buf, at, NULL);

	/* Frame-pointer chains: one deeper than 127 frames, one whose rbp points at itself, one
	 * walked with room for 3 pcs, one with none. */
	at = 0;
	add_chain(pos, sp, 200, 0);
	seed("edge-chain-deep", pos, 127, buf, at, NULL);
	seed("edge-chain-max3", pos, 3, buf, at, NULL);
	seed("edge-chain-max0", pos, 0, buf, at, NULL);
	at = 0;
	add_chain(pos, sp, 4, 1);
	seed("edge-chain-loop", pos, 127, buf, at, NULL);

	/* Tables as torn as they get: a count past the mappings there, a file slot past the
	 * files, pages and rows pointing past their arrays, a signal row with its context out of
	 * the copy, a rule of no known type. */
	{
		struct fuzz_tab h = { .proc_nr = 1000, .nmaps = 3, .nfiles = 2, .npages = 2,
				      .nrows = 3 };
		struct unwind_mapping m[3] = {
			{ 0x400000, 0x1000, 0, 0, 0 },
			{ 0x401000, 0x1000, 0x1000, 1, 0 },
			{ 0x402000, 0x1000, 0x2000, 7, 0 },
		};
		struct unwind_file f[2] = {
			{ 1, 3, 0, 0, 2, 0 }, /* its rows after its one page pair */
			{ 1, 0xffffffffu, 0, 0xfffffff0u, 0x20, 0x10 },
		};
		__u32 pages[2] = { 1, 0xffffff00u };
		struct unwind_row rows[3] = {
			{ 0, UNWIND_ROW_RULE(UNWIND_CFA_SIGNAL, 8, 0, 0) },
			{ 0x80, UNWIND_ROW_RULE(UNWIND_CFA_RSP, UNWIND_ROW_CFA_OFF_MAX,
						UNWIND_RBP_OFFSET, -UNWIND_ROW_RBP_OFF_MAX) },
			{ 0x100, UNWIND_ROW_RULE(7, 0, 3, 0) },
		};

		put(&t, &h, sizeof(h));
		put(&t, m, sizeof(m));
		put(&t, f, sizeof(f));
		put(&t, pages, sizeof(pages));
		put(&t, rows, sizeof(rows));
		at = 0;
		add_chain(pos, sp, 12, 0);
		seed("edge-tables-torn", pos, 127, buf, at, &t);
	}

	/* Noise, with and without a position its commit words could match. */
	for (size_t i = 0; i < 4096; i += 8) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		memcpy(buf + i, &rnd, 8);
	}
	seed("edge-garbage", rnd, 127, buf, 4096, NULL);
	memcpy(buf, &(uint64_t){ 1 }, 8);
	seed("edge-garbage-committed", 0, 127, buf, 4096, NULL);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--edge")) {
		outdir = argv[2];
		edge();
		return failed;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: %s [--edge] DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	return real_rings() || failed;
}
