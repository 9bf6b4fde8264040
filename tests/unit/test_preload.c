/* DEPS: preload/autoprof_preload.c src/memory/preload.c src/lib/log.c src/lib/procmem.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The preload shim linked into this test: its malloc family interposes every allocation of this
 * process (the executable comes first in symbol lookup, as LD_PRELOAD would), so the tests
 * drive it through the real functions and read its record: how many allocations it sampled, and
 * whether every sampled block's free (or realloc) was recognized. Its ring is drained here the
 * way autoprof does it (preload_ring__parse over the ring's bytes). The flush marker is not
 * probed here; its first bytes are checked.
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>

#include "preload/autoprof_preload.h"
#include "src/memory/preload.h"
#include "testlib.h"

#define NOP5 "\x0f\x1f\x44\x00\x00"

static uint64_t sampled(void)
{
	return __atomic_load_n(&autoprof_preload_v1.sampled, __ATOMIC_RELAXED);
}

static uint64_t live(void)
{
	return __atomic_load_n(&autoprof_preload_v1.live, __ATOMIC_RELAXED);
}

TEST(marker_starts_with_nop5)
{
	CHECK_EQ(autoprof_preload_v1.version, AUTOPROF_PRELOAD_VERSION);
	CHECK(!memcmp((const void *)autoprof_preload_flush, NOP5, 5));
	CHECK(autoprof_preload_v1.ring);
	CHECK_EQ(autoprof_preload_v1.ring_size, 4u << 20);
}

static struct autoprof_preload_ring *ring(void)
{
	return (void *)(uintptr_t)autoprof_preload_v1.ring;
}

/*
 * What autoprof does, in this process: the committed records from tail on, tail past them.
 * -EBADMSG for a record the shim should never write: a length that cannot be, or one that runs
 * past head or the ring's end (it pads the ring's end, and commits only what it reserved).
 */
static long drain_here(preload_rec_fn fn, void *arg)
{
	struct autoprof_preload_ring *r = ring();
	uint64_t size = autoprof_preload_v1.ring_size;
	long total = 0;

	for (;;) {
		uint64_t tail = r->tail, head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		uint64_t off = tail & (size - 1), n = head - tail;
		enum preload_parse_stop stop;
		long k;

		if (n > size - off)
			n = size - off;
		if (!n)
			return total;
		k = preload_ring__parse(r->data + off, n, tail, fn, arg, &stop);
		if (k >= 0 && stop == PRELOAD_PARSE_CUT)
			return -EBADMSG;
		if (k <= 0)
			return k < 0 ? k : total;
		__atomic_store_n(&r->tail, tail + (uint64_t)k, __ATOMIC_RELEASE);
		total += k;
	}
}

#define MAX_SEEN 4096

/* The records a drain saw: per thread, each ALLOC's pointer must come back in a FREE. */
struct seen {
	uint64_t allocs, frees, bad_order;
	uint32_t nr_open;
	struct {
		uint32_t tid;
		uint64_t ptr;
	} open[MAX_SEEN];
	struct autoprof_preload_rec last;
	uint8_t last_stack[256];
};

static void see(void *arg, const struct autoprof_preload_rec *r, const void *stack)
{
	struct seen *s = arg;

	if (r->type == AUTOPROF_REC_ALLOC) {
		s->allocs++;
		s->last = *r;
		memcpy(s->last_stack, stack, r->stack_len < 256 ? r->stack_len : 256);
		if (s->nr_open < MAX_SEEN)
			s->open[s->nr_open++] = (typeof(s->open[0])){ r->tid, r->ptr };
		return;
	}
	s->frees++;
	for (uint32_t i = 0; i < s->nr_open; i++) {
		if (s->open[i].ptr == r->ptr) {
			s->bad_order += s->open[i].tid != r->tid;
			s->open[i] = s->open[--s->nr_open];
			return;
		}
	}
	s->bad_order++; /* a free before its allocation, or of a block never reported */
}

static uintptr_t alloc_here_ret;
static void *volatile sink;

/* Runs the countdown out, so that the thread draws with the mean just set (the compiler may
 * not drop the pair: the block escapes). */
static void fresh_draw(void)
{
	sink = malloc(64 << 20);
	free(sink);
}

static __attribute__((noinline)) void *alloc_here(size_t n)
{
	void *p = malloc(n);

	alloc_here_ret = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return p;
}

/* A record per sampled allocation and free, only while a consumer reads, with the stack. */
TEST(ring_records)
{
	static struct seen s;
	uint64_t head;
	static volatile uintptr_t addr; /* not a pointer to the compiler's use-after-free check */
	bool found = false;
	void *p;
	int local;

	autoprof_preload_v1.mean = 1;
	fresh_draw();
	autoprof_preload_v1.consumer = 1;
	CHECK(drain_here(NULL, NULL) >= 0);
	p = alloc_here(100);
	addr = (uintptr_t)p;
	free(p);
	memset(&s, 0, sizeof(s));
	CHECK(drain_here(see, &s) > 0);
	CHECK_EQ(s.allocs, 1);
	CHECK_EQ(s.frees, 1);
	CHECK_EQ(s.bad_order, 0);
	CHECK_EQ(s.nr_open, 0);
	CHECK_EQ(s.last.ptr, addr);
	CHECK_EQ(s.last.size, 100);
	CHECK_EQ(s.last.mean, 1);
	CHECK(s.last.time_ns > 0);
	/* The walk starts in the caller: its return address, its stack after the return. */
	CHECK(s.last.pc > (uintptr_t)alloc_here && s.last.pc < (uintptr_t)alloc_here + 256);
	CHECK(s.last.sp < (uintptr_t)&local && s.last.sp > (uintptr_t)&local - 4096);
	CHECK(s.last.stack_len >= 64);
	for (uint32_t i = 0; i + 8 <= (s.last.stack_len < 256 ? s.last.stack_len : 256); i += 8) {
		uint64_t w;

		memcpy(&w, s.last_stack + i, 8);
		found |= w == alloc_here_ret;
	}
	if (!found)
		FAILF("alloc_here's return address is not in the first 256 bytes of the copy");
	/* No consumer: nothing written. */
	autoprof_preload_v1.consumer = 0;
	head = ring()->head;
	free(alloc_here(100));
	CHECK_EQ(ring()->head, head);
	autoprof_preload_v1.mean = 512 * 1024;
	fresh_draw(); /* or this thread's next block (another thread's TLS) would be sampled */
}

/* A forked child writes its own ring (the parent's is shared memory), and only once read. */
TEST(fork_gets_its_own_ring)
{
	uint64_t head;
	int status;
	pid_t pid;

	autoprof_preload_v1.mean = 1;
	fresh_draw();
	autoprof_preload_v1.consumer = 1;
	drain_here(NULL, NULL);
	head = ring()->head;
	pid = fork();
	if (pid == 0) {
		int bad = autoprof_preload_v1.consumer != 0 || ring()->head != 0 ||
			  (uintptr_t)ring() != autoprof_preload_v1.ring;

		autoprof_preload_v1.consumer = 1;
		free(alloc_here(100));
		_exit(bad ? 2 : ring()->head ? 0 : 3);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(ring()->head, head);
	autoprof_preload_v1.consumer = 0;
	autoprof_preload_v1.mean = 512 * 1024;
	fresh_draw(); /* or this thread's next block (another thread's TLS) would be sampled */
}

/* Past the ring's end (pad records) many times, then full: losses counted, nothing torn. */
TEST(ring_wraps_and_fills)
{
	static struct seen s;
	uint64_t size = autoprof_preload_v1.ring_size, dropped0, head0 = ring()->head;
	long n = 0;

	autoprof_preload_v1.mean = 1;
	fresh_draw();
	autoprof_preload_v1.consumer = 1;
	drain_here(NULL, NULL);
	memset(&s, 0, sizeof(s));
	dropped0 = autoprof_preload_v1.dropped;
	for (int i = 0; i < 40000; i++) {
		free(alloc_here(16 + (i % 7) * 8));
		if (i % 64 == 63)
			CHECK(drain_here(see, &s) >= 0);
	}
	CHECK(drain_here(see, &s) >= 0);
	CHECK(ring()->head - head0 > 3 * size);
	CHECK_EQ(autoprof_preload_v1.dropped, dropped0);
	CHECK_EQ(s.allocs, 40000);
	CHECK_EQ(s.frees, 40000);
	CHECK_EQ(s.bad_order, 0);
	/* Nobody drains: the ring fills, records are lost and counted, those in it intact. */
	for (int i = 0; i < 40000 && autoprof_preload_v1.dropped == dropped0; i++)
		free(alloc_here(32));
	CHECK(autoprof_preload_v1.dropped > dropped0);
	n = drain_here(see, &s);
	CHECK(n > (long)(size / 2));
	CHECK_EQ(ring()->head, ring()->tail);
	CHECK_EQ(s.bad_order, 0);
	autoprof_preload_v1.consumer = 0;
	autoprof_preload_v1.mean = 512 * 1024;
	fresh_draw(); /* or this thread's next block (another thread's TLS) would be sampled */
}

struct churn {
	size_t size;
	long n;
	uint64_t sampled;
};

/* On its own thread, so that the count starts at a fresh draw. */
static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	void **keep = malloc(c->n * sizeof(*keep));
	uint64_t before = sampled();

	for (long i = 0; keep && i < c->n; i++) {
		keep[i] = malloc(c->size);
		*(volatile char *)keep[i] = 1;
	}
	c->sampled = sampled() - before;
	for (long i = 0; keep && i < c->n; i++)
		free(keep[i]);
	free(keep);
	return NULL;
}

TEST(samples_by_bytes)
{
	struct churn c = {.size = 256, .n = 200000};
	uint64_t live0 = live();
	pthread_t t;

	autoprof_preload_v1.mean = 65536;
	CHECK(!pthread_create(&t, NULL, churn_thread, &c));
	CHECK(!pthread_join(t, NULL));
	/* 51.2 MB at a 64 KiB mean: 781 expected, the Poisson spread is about 28. */
	if (c.sampled < 650 || c.sampled > 920)
		FAILF("%" PRIu64 " samples of 200000 256-byte blocks at 64 KiB", c.sampled);
	/* Every sampled block's free was recognized. */
	CHECK_EQ(live(), live0);
	/* Big blocks are sampled almost always. */
	c = (struct churn){.size = 1 << 20, .n = 200};
	CHECK(!pthread_create(&t, NULL, churn_thread, &c));
	CHECK(!pthread_join(t, NULL));
	CHECK(c.sampled >= 190);
	CHECK_EQ(live(), live0);
}

/* Sizes no allocation can have, hidden from the compiler's checks. */
static volatile size_t huge = SIZE_MAX;

/* Every entry point, each block sampled (mean 1), freed through every path. */
TEST(every_function_tracked)
{
	uint64_t s0, live0 = live();
	void *p, *q;

	autoprof_preload_v1.mean = 1;
	/* A thread draws with the new mean once its current countdown ran out. */
	free(malloc(64 << 20));
	s0 = sampled();
	p = malloc(100);
	CHECK(p);
	CHECK_EQ(live(), live0 + 1);
	p = realloc(p, 100000); /* moved: the old one forgotten, the new one sampled */
	CHECK(p);
	CHECK_EQ(live(), live0 + 1);
	p = reallocarray(p, 10, 20);
	CHECK(p);
	CHECK_EQ(live(), live0 + 1);
	CHECK_EQ(realloc(p, 0), NULL); /* realloc(p, 0) frees */
	CHECK_EQ(live(), live0);
	p = calloc(10, 10);
	CHECK(p && !((char *)p)[99]);
	CHECK_EQ(live(), live0 + 1);
	free(p);
	CHECK(!posix_memalign(&p, 64, 100) && !((uintptr_t)p & 63));
	q = aligned_alloc(4096, 4096);
	CHECK(q && !((uintptr_t)q & 4095));
	CHECK_EQ(live(), live0 + 2);
	free(p);
	free(q);
	p = memalign(256, 10);
	q = valloc(10);
	CHECK(p && q);
	CHECK_EQ(live(), live0 + 2);
	free(q);
	free(p);
	p = pvalloc(10);
	CHECK(p);
	free(p);
	CHECK_EQ(live(), live0);
	CHECK_EQ(sampled() - s0, 9);
	/* Big anonymous mappings are allocations; files and small ones are not. */
	q = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK_EQ(live(), live0 + 1);
	CHECK(!munmap(q, 1 << 20));
	CHECK_EQ(live(), live0);
	q = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK_EQ(live(), live0);
	munmap(q, 4096);
	CHECK_EQ(sampled() - s0, 10);
	/* Failures sample nothing and keep nothing. */
	CHECK_EQ(calloc(huge / 2, 4), NULL);
	CHECK_EQ(malloc(huge - 100), NULL);
	CHECK_EQ(live(), live0);
	free(NULL);
	autoprof_preload_v1.mean = 512 * 1024;
	fresh_draw(); /* or this thread's next block (another thread's TLS) would be sampled */
}

static int running;

static void *thread_churn(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&running, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 100000; i++) {
		void *p = malloc(16 + (i % 64) * 16);

		*(volatile char *)p = 1;
		p = realloc(p, 32 + (i % 32) * 64);
		free(p);
	}
	__atomic_fetch_sub(&running, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Threads allocating and freeing at once, sharing slots and stripes: nothing lost or left. */
TEST(threads)
{
	uint64_t s0 = sampled(), live0 = live(), dropped0;
	static struct seen s;
	pthread_t t[4];

	autoprof_preload_v1.mean = 4096;
	autoprof_preload_v1.consumer = 1;
	drain_here(NULL, NULL);
	dropped0 = autoprof_preload_v1.dropped;
	for (int i = 0; i < 4; i++)
		CHECK(!pthread_create(&t[i], NULL, thread_churn, NULL));
	/* Drained while four threads write: each record whole, each free after its allocation. */
	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
		CHECK(drain_here(see, &s) >= 0);
	for (int i = 0; i < 4; i++)
		CHECK(!pthread_join(t[i], NULL));
	CHECK(drain_here(see, &s) >= 0);
	autoprof_preload_v1.consumer = 0;
	CHECK(sampled() - s0 > 1000);
	if (autoprof_preload_v1.dropped == dropped0) {
		CHECK_EQ(s.allocs, sampled() - s0);
		CHECK_EQ(s.bad_order, 0);
	}
	CHECK(s.allocs + autoprof_preload_v1.dropped - dropped0 >= sampled() - s0);
	/* A thread's own start may leave a sampled block live (its TLS, kept with its cached
	 * stack); a lost free in the loops would leave hundreds. */
	CHECK(live() - live0 <= 4);
	autoprof_preload_v1.mean = 512 * 1024;
	fresh_draw(); /* or this thread's next block (another thread's TLS) would be sampled */
}

/* A record at buf[at], for position pos + at, committed. */
static void put_rec(uint8_t *buf, uint64_t pos, size_t at, uint32_t type, uint32_t len)
{
	struct autoprof_preload_rec *rec = (void *)(buf + at);

	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	rec->len = len;
	rec->commit = pos + at + 1;
}

static void count_rec(void *arg, const struct autoprof_preload_rec *r, const void *stack)
{
	(void)r;
	(void)stack;
	++*(unsigned *)arg;
}

/* parse says why it stopped: the buffer's end, a record not committed, one cut by the end. */
TEST(parse_says_why_it_stopped)
{
	const size_t hdr = sizeof(struct autoprof_preload_rec);
	const uint64_t pos = 4096;
	uint64_t words[64] = {};
	uint8_t *buf = (uint8_t *)words;
	enum preload_parse_stop stop;
	unsigned nrec = 0;

	/* Less than a record's start. */
	CHECK_EQ(preload_ring__parse(buf, 8, pos, count_rec, &nrec, &stop), 0);
	CHECK_EQ(stop, PRELOAD_PARSE_END);

	/* Nothing committed at the start; then one record, then nothing committed after it. */
	CHECK_EQ(preload_ring__parse(buf, sizeof(words), pos, count_rec, &nrec, &stop), 0);
	CHECK_EQ(stop, PRELOAD_PARSE_PENDING);
	put_rec(buf, pos, 0, AUTOPROF_REC_FREE, hdr);
	CHECK_EQ(preload_ring__parse(buf, sizeof(words), pos, count_rec, &nrec, &stop), hdr);
	CHECK_EQ(stop, PRELOAD_PARSE_PENDING);
	CHECK_EQ(nrec, 1);

	/* A commit word for another position is not committed here. */
	put_rec(buf, pos + 4096, hdr, AUTOPROF_REC_FREE, hdr);
	CHECK_EQ(preload_ring__parse(buf, sizeof(words), pos, NULL, NULL, &stop), hdr);
	CHECK_EQ(stop, PRELOAD_PARSE_PENDING);

	/* Two whole records filling the buffer; and with a tail shorter than a record's start. */
	put_rec(buf, pos, hdr, AUTOPROF_REC_FREE, hdr);
	CHECK_EQ(preload_ring__parse(buf, 2 * hdr, pos, NULL, NULL, &stop), 2 * hdr);
	CHECK_EQ(stop, PRELOAD_PARSE_END);
	CHECK_EQ(preload_ring__parse(buf, 2 * hdr + 8, pos, NULL, NULL, &stop), 2 * hdr);
	CHECK_EQ(stop, PRELOAD_PARSE_END);

	/* Committed, but running past the buffer: after a whole record, and at its start. */
	put_rec(buf, pos, hdr, AUTOPROF_REC_ALLOC, hdr + 64);
	CHECK_EQ(preload_ring__parse(buf, 2 * hdr, pos, NULL, NULL, &stop), hdr);
	CHECK_EQ(stop, PRELOAD_PARSE_CUT);
	CHECK_EQ(preload_ring__parse(buf + hdr, 16, pos + hdr, NULL, NULL, &stop), 0);
	CHECK_EQ(stop, PRELOAD_PARSE_CUT);
	CHECK_EQ(preload_ring__parse(buf, 2 * hdr + 64, pos, NULL, NULL, &stop), 2 * hdr + 64);
	CHECK_EQ(stop, PRELOAD_PARSE_END);

	/* A length no record has: not a reason to stop, an error. */
	put_rec(buf, pos, hdr, AUTOPROF_REC_FREE, hdr + 8);
	CHECK_EQ(preload_ring__parse(buf, sizeof(words), pos, NULL, NULL, &stop), -EBADMSG);
}

/*
 * preload_ring__drain on a ring made here by hand (a sealed memfd, as the shim makes it), as a
 * process could write it: what no shim writes stops nothing. A committed record running past
 * the ring's end or past head, or a head where no record can start, is counted malformed and
 * skipped to head (before, the ring stayed stuck at it for good).
 */
static struct autoprof_preload fake = { .version = AUTOPROF_PRELOAD_VERSION, .stack_max = 1024 };

static void fake_rec(struct autoprof_preload_ring *r, uint64_t pos, uint32_t type, uint32_t len)
{
	struct autoprof_preload_rec *rec = (void *)(r->data + (pos & (fake.ring_size - 1)));

	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	rec->len = len;
	rec->commit = pos + 1;
}

struct drained {
	unsigned allocs, frees;
};

static void count_drained(void *arg, const struct autoprof_preload_rec *r, const void *stack)
{
	struct drained *d = arg;

	(void)stack;
	if (r->type == AUTOPROF_REC_ALLOC)
		d->allocs++;
	else
		d->frees++;
}

static struct preload_ring_stats ring_stats(const struct preload_ring *pr)
{
	struct preload_ring_stats st = {};

	preload_ring__add_stats(pr, &st);
	return st;
}

static int fake_drain(struct preload_ring *pr, struct drained *d)
{
	memset(d, 0, sizeof(*d));
	return preload_ring__drain(pr, count_drained, d);
}

TEST(drain_skips_what_no_shim_writes)
{
	const uint64_t size = 4096, hdr = sizeof(struct autoprof_preload_rec);
	int fd = memfd_create("test-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct autoprof_preload_ring *r = MAP_FAILED;
	struct preload_ring_stats st;
	struct preload_ring *pr;
	struct drained d;
	uint64_t pos;
	int err;

	CHECK(fd >= 0);
	if (fd >= 0 && !ftruncate(fd, sizeof(*r) + size) &&
	    !fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		r = mmap(NULL, sizeof(*r) + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(r != MAP_FAILED);
	if (r == MAP_FAILED)
		return;
	pos = 3 * size - 256;
	r->head = r->tail = pos;
	fake.ring = (uintptr_t)r;
	fake.ring_size = size;
	pr = preload_ring__open((uint32_t)getpid(), (uintptr_t)&fake, &err);
	CHECK(pr);
	if (!pr)
		goto out_free;
	CHECK_EQ(fake.consumer, (uint64_t)getpid());

	/* A free, then an allocation committed across the ring's end (no pad before it). */
	fake_rec(r, pos, AUTOPROF_REC_FREE, hdr);
	fake_rec(r, pos + hdr, AUTOPROF_REC_ALLOC, 336);
	r->head = pos + hdr + 336;
	CHECK_EQ(fake_drain(pr, &d), 1);
	CHECK_EQ(d.frees, 1);
	CHECK_EQ(r->tail, pos + hdr);
	CHECK_EQ(fake_drain(pr, &d), 0);
	st = ring_stats(pr);
	CHECK_EQ(st.malformed, 1);
	CHECK_EQ(r->tail, r->head);

	/* Records the shim would write go through after that. */
	pos = r->head;
	fake_rec(r, pos, AUTOPROF_REC_ALLOC, hdr + 64);
	((struct autoprof_preload_rec *)(r->data + (pos & (size - 1))))->stack_len = 64;
	fake_rec(r, pos + hdr + 64, AUTOPROF_REC_FREE, hdr);
	r->head = pos + 2 * hdr + 64;
	CHECK_EQ(fake_drain(pr, &d), 2);
	CHECK_EQ(d.allocs, 1);
	CHECK_EQ(r->tail, r->head);

	/* Committed, but running past head. */
	pos = r->head;
	fake_rec(r, pos, AUTOPROF_REC_FREE, hdr);
	r->head = pos + 64;
	CHECK_EQ(fake_drain(pr, &d), 0);
	st = ring_stats(pr);
	CHECK_EQ(st.malformed, 2);
	CHECK_EQ(r->tail, pos + 64);

	/* Not committed yet: waited for, not skipped. */
	pos = r->head;
	memset(r->data + (pos & (size - 1)), 0, hdr);
	r->head = pos + hdr;
	CHECK_EQ(fake_drain(pr, &d), 0);
	st = ring_stats(pr);
	CHECK_EQ(st.malformed, 2);
	CHECK_EQ(r->tail, pos);

	/* A head 8 bytes on: no record starts there. */
	r->head = pos + 8;
	CHECK_EQ(fake_drain(pr, &d), 0);
	st = ring_stats(pr);
	CHECK_EQ(st.malformed, 3);
	CHECK_EQ(r->tail, r->head);

	preload_ring__close(pr);
	CHECK_EQ(fake.consumer, 0);
out_free:
	munmap(r, sizeof(*r) + size);
}

int main(void)
{
	RUN(marker_starts_with_nop5);
	RUN(ring_records);
	RUN(ring_wraps_and_fills);
	RUN(fork_gets_its_own_ring);
	RUN(samples_by_bytes);
	RUN(every_function_tracked);
	RUN(threads);
	RUN(parse_says_why_it_stopped);
	RUN(drain_skips_what_no_shim_writes);
	return test_summary();
}
