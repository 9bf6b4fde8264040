// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threads that wait in known places, for the off-CPU tests:
 *   reader   blocks in read() on a pipe inside wait_in_read (the main thread writes a byte
 *            every 100 ms, and closes the pipe at the end);
 *   sleeper  sleeps 20 ms at a time in nanosleep() inside wait_in_nanosleep;
 *   spinner  never blocks;
 *   longwait sleeps LONG seconds once inside long_block.
 * Each waiting function calls the libc wrapper through a helper (read_once, sleep_once): libc has
 * no frame pointers, so a frame-pointer walk loses the wrapper's caller; table unwinding must
 * keep it, right above the wrapper.
 *   offcpu_waits SECONDS LONG
 * Prints its pid, then "long_end MONO_NS" when longwait wakes, then "NAME_wall NS" per thread.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2];
static uint64_t deadline_ns;
static double long_seconds;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) ssize_t read_once(char *c)
{
	return read(pipefd[0], c, 1);
}

__attribute__((noinline)) void wait_in_read(void)
{
	char c;

	while (read_once(&c) > 0)
		;
}

__attribute__((noinline)) void sleep_once(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void wait_in_nanosleep(void)
{
	while (now_ns() < deadline_ns)
		sleep_once(20000000L);
}

__attribute__((noinline)) void spin(void)
{
	uint64_t x = sink;

	while (now_ns() < deadline_ns)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

__attribute__((noinline)) void long_block(void)
{
	sleep_once((long)(long_seconds * 1e9));
	printf("long_end %llu\n", (unsigned long long)now_ns());
	fflush(stdout);
}

struct worker {
	const char *name;
	void (*fn)(void);
	pthread_t thread;
	uint64_t wall_ns;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t t = now_ns();

	pthread_setname_np(pthread_self(), w->name);
	w->fn();
	w->wall_ns = now_ns() - t;
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker workers[] = {
		{ .name = "reader", .fn = wait_in_read },
		{ .name = "sleeper", .fn = wait_in_nanosleep },
		{ .name = "spinner", .fn = spin },
		{ .name = "longwait", .fn = long_block },
	};
	double seconds = argc > 1 ? atof(argv[1]) : 4;

	long_seconds = argc > 2 ? atof(argv[2]) : 3;
	printf("%d\n", getpid());
	fflush(stdout);
	if (pipe(pipefd))
		return 1;
	deadline_ns = now_ns() + (uint64_t)(seconds * 1e9);
	for (size_t i = 0; i < sizeof(workers) / sizeof(workers[0]); i++)
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]))
			return 1;
	while (now_ns() < deadline_ns) {
		usleep(100000);
		if (write(pipefd[1], "x", 1) != 1)
			return 1;
	}
	close(pipefd[1]);
	for (size_t i = 0; i < sizeof(workers) / sizeof(workers[0]); i++) {
		pthread_join(workers[i].thread, NULL);
		printf("%s_wall %llu\n", workers[i].name, (unsigned long long)workers[i].wall_ns);
	}
	return 0;
}
