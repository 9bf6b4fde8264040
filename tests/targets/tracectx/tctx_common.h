/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef TCTX_COMMON_H
#define TCTX_COMMON_H

/*
 * The body shared by tctx_exe and tctx_lib: two threads that each publish a new random span
 * every 200 ms through otel_thread_ctx_v1 (OTEP 4947) and spin in traced_spin, one thread that
 * never publishes and spins in untraced_spin. The including file defines where the variable
 * lives by providing ctx_publish() (sets the calling thread's pointer) and ctx_tpoff() (the
 * variable's offset from the thread pointer), and may define TCTX_SETUP to have ctx_setup()
 * called first.
 *
 * Output, line-buffered on stdout: "TPOFF <decimal>", "PID <pid>", then one
 * "SPAN <tid> <trace hex> <span hex>" per published span. Runs argv[1] seconds (default 10).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* The record, packed, host endian: the 28-byte header of the standard and no attributes. */
struct otel_thread_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_data_size;
} __attribute__((packed));

_Static_assert(sizeof(struct otel_thread_ctx) == 28, "record header is 28 bytes");

static void ctx_publish(struct otel_thread_ctx *rec);
static long ctx_tpoff(void);
#ifdef TCTX_SETUP
static void ctx_setup(void);
#endif

#define SPAN_PERIOD_NS 200000000LL

static volatile int stop;

/*
 * Other thread-local data of the executable, over-aligned: the executable's TLS block then has
 * more than the variable, so a reader must place it right (tctx_exe) or step over the
 * executable's block to the library's (tctx_lib).
 */
static __thread volatile unsigned long spin_count[8] __attribute__((aligned(64)));

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void traced_spin(long long until)
{
	while (!stop && now_ns() < until)
		spin_count[0]++;
}

__attribute__((noinline)) void untraced_spin(long long until)
{
	while (!stop && now_ns() < until)
		spin_count[0]++;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void random_ids(struct otel_thread_ctx *rec)
{
	/* A zero trace id means "no trace" to readers: draw again (practically never). */
	do {
		if (getrandom(rec->trace_id, sizeof(rec->trace_id), 0) != sizeof(rec->trace_id) ||
		    getrandom(rec->span_id, sizeof(rec->span_id), 0) != sizeof(rec->span_id))
			abort();
	} while (!memcmp(rec->trace_id, (uint8_t[16]){0}, 16));
}

static void *traced_thread(void *arg)
{
	/*
	 * Two records: the next span is written into the one not published, so that a reader
	 * stopping this thread at any instruction sees either the old span or the new one whole.
	 */
	struct otel_thread_ctx recs[2];
	int cur = 0;

	(void)arg;
	memset(recs, 0, sizeof(recs));
	while (!stop) {
		struct otel_thread_ctx *rec = &recs[cur];
		char trace[33], span[17];

		rec->valid = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		random_ids(rec);
		rec->trace_flags = 1;
		rec->attrs_data_size = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		rec->valid = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		ctx_publish(rec);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);

		hex(trace, rec->trace_id, 16);
		hex(span, rec->span_id, 8);
		printf("SPAN %d %s %s\n", gettid(), trace, span);
		fflush(stdout);
		traced_spin(now_ns() + SPAN_PERIOD_NS);
		cur ^= 1;
	}
	ctx_publish(NULL);
	return NULL;
}

static void *untraced_thread(void *arg)
{
	(void)arg;
	ctx_publish(NULL);
	while (!stop)
		untraced_spin(now_ns() + SPAN_PERIOD_NS);
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 10;
	pthread_t th[3];

#ifdef TCTX_SETUP
	ctx_setup();
#endif
	printf("TPOFF %ld\n", ctx_tpoff());
	printf("PID %d\n", getpid());
	fflush(stdout);
	if (pthread_create(&th[0], NULL, traced_thread, NULL) ||
	    pthread_create(&th[1], NULL, traced_thread, NULL) ||
	    pthread_create(&th[2], NULL, untraced_thread, NULL)) {
		perror("pthread_create");
		return 1;
	}
	sleep(seconds > 0 ? seconds : 1);
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return 0;
}

#endif
