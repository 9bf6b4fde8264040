// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exec churn for bench/churn.sh: runs the programs named on the command line round-robin with
 * posix_spawn, one at a time, each waited for, as fast as it can for SECONDS seconds; prints
 * "execs N" and "seconds S". Each program is expected to exit at once. With SPAWN_RATE=N in the
 * environment, at most N execs a second, paced evenly (bench/scale.sh).
 *   spawn_loop SECONDS PROG...
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double t0, end, t, rate;
	unsigned long n = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SECONDS PROG...\n", argv[0]);
		return 2;
	}
	rate = getenv("SPAWN_RATE") ? atof(getenv("SPAWN_RATE")) : 0;
	t0 = now();
	end = t0 + atof(argv[1]);
	do {
		for (int i = 2; i < argc; i++, n++) {
			char *args[] = {argv[i], NULL};
			pid_t pid;
			int st;

			if (posix_spawn(&pid, argv[i], NULL, NULL, args, environ)) {
				perror(argv[i]);
				return 1;
			}
			waitpid(pid, &st, 0);
			while (rate > 0 && (t = now()) < t0 + (n + 1) / rate && t < end) {
				struct timespec ts = { 0, 200000 };

				nanosleep(&ts, NULL);
			}
		}
		t = now();
	} while (t < end);
	printf("execs %lu\nseconds %.3f\n", n, t - t0);
	return 0;
}
