// SPDX-License-Identifier: GPL-2.0-only
/*
 * main → sig_victim spins; SIGPROF every 10 ms of CPU time runs sig_handler → sig_hot, which
 * spins 8 ms of CPU time: most samples are in sig_hot on the signal frame. The walk must cross
 * __restore_rt (its CFI reads the interrupted registers from the ucontext) back into
 * sig_victim, stopped at whatever instruction the signal came.
 *   uw_signal SECONDS
 */
#include <signal.h>
#include <sys/time.h>

#include "uw_common.h"

static volatile uint64_t sink;

/* This thread's CPU time: under contention for the CPU the handler still takes 8 ms of each
 * 10 ms of CPU time, as ITIMER_PROF counts it too. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

UW_NOINLINE uint64_t sig_hot(uint64_t x)
{
	double end = cpu_now() + 0.008;

	/* clock_gettime is async-signal-safe; ~0.1 ms of work between calls. */
	do
		UW_SPIN(x, 100000); /* HOT */
	while (cpu_now() < end);
	return x;
}

UW_NOINLINE void sig_handler(int sig)
{
	uint64_t x = sink + (uint64_t)sig;

	x = sig_hot(x);
	UW_BARRIER();
	sink = x;
}

UW_NOINLINE void sig_victim(double end)
{
	uint64_t x = sink;

	/* Rare clock reads (one per ~1 ms of work): the signal nearly always interrupts the loop
	 * in sig_victim itself, not the vDSO. */
	while (uw_now() < end) {
		UW_SPIN(x, 1000000);
		sink += x;
	}
}

int main(int argc, char **argv)
{
	double end = uw_start(argc, argv);
	struct sigaction sa = {.sa_handler = sig_handler, .sa_flags = SA_RESTART};
	struct itimerval it = {{0, 10000}, {0, 10000}};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	sig_victim(end);
	UW_BARRIER();
	return 0;
}
