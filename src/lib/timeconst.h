/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_TIMECONST_H
#define AUTOPROF_LIB_TIMECONST_H

#include <stdint.h>
#include <time.h>

/*
 * The kernel's names for the ratios between time units. Unsigned long long, so that a count of
 * seconds times NSEC_PER_SEC cannot overflow int arithmetic, whatever type the count has.
 */
#define NSEC_PER_SEC  1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_USEC 1000ULL
#define USEC_PER_SEC  1000000ULL
#define MSEC_PER_SEC  1000ULL

/* CLOCK_MONOTONIC in nanoseconds: the clock of bpf_ktime_get_ns(), which events carry. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME in nanoseconds: the wall clock users' start= and end= are written in. */
static inline uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif
