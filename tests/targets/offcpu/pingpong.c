// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two threads bounce a byte over a pair of pipes: each round trip is two blocking reads, so
 * about four context switches. The off-CPU benchmark's workload, and a busy scheduler for tests.
 *   pingpong SECONDS
 * Prints its pid, then "round_trips_per_second N".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *ponger(void *arg)
{
	char c;

	(void)arg;
	while (read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	uint64_t rounds = 0, start, deadline, end;
	pthread_t t;
	char c = 'x';

	printf("%d\n", getpid());
	fflush(stdout);
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, ponger, NULL))
		return 1;
	start = now_ns();
	deadline = start + (uint64_t)(seconds * 1e9);
	do {
		/* Check the clock every 1024 rounds: the loop is what is measured. */
		for (int i = 0; i < 1024; i++) {
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
				return 1;
		}
		rounds += 1024;
		end = now_ns();
	} while (end < deadline);
	close(ping[1]);
	pthread_join(t, NULL);
	printf("round_trips_per_second %.0f\n", rounds / ((end - start) / 1e9));
	return 0;
}
