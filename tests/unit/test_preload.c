/* DEPS: preload/autoprof_preload.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The preload shim linked into this test: its malloc family interposes every allocation of this
 * process (the executable comes first in symbol lookup, as LD_PRELOAD would), so the tests
 * drive it through the real functions and read its record: how many allocations it sampled, and
 * whether every sampled block's free (or realloc) was recognized. The markers are not probed
 * here; their first bytes are checked.
 */
#include <malloc.h>
#include <sys/mman.h>
#include <pthread.h>
#include <unistd.h>

#include "preload/autoprof_preload.h"
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

TEST(markers_start_with_nop5)
{
	CHECK_EQ(autoprof_preload_v1.version, 1);
	CHECK(!memcmp((const void *)autoprof_preload_alloc, NOP5, 5));
	CHECK(!memcmp((const void *)autoprof_preload_free, NOP5, 5));
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
}

static void *thread_churn(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		void *p = malloc(16 + (i % 64) * 16);

		*(volatile char *)p = 1;
		p = realloc(p, 32 + (i % 32) * 64);
		free(p);
	}
	return NULL;
}

/* Threads allocating and freeing at once, sharing slots and stripes: nothing lost or left. */
TEST(threads)
{
	uint64_t s0 = sampled(), live0 = live();
	pthread_t t[4];

	autoprof_preload_v1.mean = 4096;
	for (int i = 0; i < 4; i++)
		CHECK(!pthread_create(&t[i], NULL, thread_churn, NULL));
	for (int i = 0; i < 4; i++)
		CHECK(!pthread_join(t[i], NULL));
	CHECK(sampled() - s0 > 1000);
	/* A thread's own start may leave a sampled block live (its TLS, kept with its cached
	 * stack); a lost free in the loops would leave hundreds. */
	CHECK(live() - live0 <= 4);
	autoprof_preload_v1.mean = 512 * 1024;
}

int main(void)
{
	RUN(markers_start_with_nop5);
	RUN(samples_by_bytes);
	RUN(every_function_tracked);
	RUN(threads);
	return test_summary();
}
