// SPDX-License-Identifier: GPL-2.0-only
/*
 * C++ with exceptions, -fomit-frame-pointer: main → cx_outer (try/catch) → cx_middle → cx_leaf.
 * cx_middle throws every 16th call and cx_outer catches it, so the program really unwinds
 * through these frames with the same .eh_frame the profiler reads.
 *   uw_cxx SECONDS
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <unistd.h>

static volatile uint64_t sink;
static unsigned calls, caught;

static double now()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline, noipa)) uint64_t cx_leaf(uint64_t x)
{
	for (uint64_t i = 0; i < 1000000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL; // HOT
		asm volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline, noipa)) uint64_t cx_middle(uint64_t a)
{
	uint64_t v0 = a * 3, v1 = a ^ 0x55, v2 = a + 11, v3 = a * 7;

	asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3));
	uint64_t r = cx_leaf(a);
	asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3) : : "memory");
	if (++calls % 16 == 0)
		throw std::runtime_error("now and then");
	return r + v0 * v1 + v2 * v3;
}

__attribute__((noinline, noipa)) uint64_t cx_outer(uint64_t a)
{
	uint64_t keep = a * 5;

	asm volatile("" : "+r"(keep));
	try {
		uint64_t r = cx_middle(a);
		asm volatile("" ::: "memory");
		return r ^ keep;
	} catch (const std::runtime_error &) {
		caught++;
		return keep;
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	uint64_t x = (uint64_t)getpid();

	printf("%d\n", (int)getpid());
	fflush(stdout);
	double end = now() + secs;
	while (now() < end) {
		x = cx_outer(x);
		asm volatile("" ::: "memory");
	}
	sink = x;
	if (calls >= 16 && !caught)
		return 1; /* the exceptions did not unwind as meant */
	return 0;
}
