// SPDX-License-Identifier: GPL-2.0-only
/*
 * Workload of bench/unwind.sh: THREADS threads (the main one included) spin for SECONDS in C++
 * code built -O2 -fomit-frame-pointer, under a few levels of noinline functions, with most of
 * the time in std::sort (inlined templates), std::map (libstdc++'s _Rb_tree_* and operator new,
 * glibc's malloc/free) and std::ostringstream (libstdc++'s locale and num_put code, glibc's
 * memcpy/strlen). Frame-pointer walking loses callers in all of these; unwind tables must
 * carry every sample up to main (main thread) or start_thread/clone3 (the others).
 *   unwind_workload SECONDS [THREADS]
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#define NOINLINE __attribute__((noinline))
/* Keeps a call from becoming a tail call (which would drop the caller's frame honestly). */
#define BARRIER() asm volatile("" ::: "memory")

static std::chrono::steady_clock::time_point deadline;
std::atomic<uint64_t> sink;

NOINLINE uint64_t uw_sort(std::mt19937 &rng)
{
	std::vector<uint32_t> v(4096);

	for (auto &x : v)
		x = rng();
	std::sort(v.begin(), v.end());
	BARRIER();
	return v[v.size() / 2];
}

NOINLINE uint64_t uw_map(std::mt19937 &rng)
{
	std::map<uint32_t, uint64_t> m;
	uint64_t s = 0;

	for (int i = 0; i < 2048; i++)
		m[rng() % 8192] += i;
	for (const auto &kv : m)
		s += kv.first ^ kv.second;
	BARRIER();
	return s;
}

NOINLINE uint64_t uw_format(std::mt19937 &rng)
{
	std::ostringstream os;

	for (int i = 0; i < 256; i++)
		os << rng() << ' ' << (rng() % 1000) / 7.0 << '\n';
	BARRIER();
	return os.str().size();
}

NOINLINE uint64_t uw_level3(std::mt19937 &rng, unsigned round)
{
	uint64_t r;

	switch (round % 3) {
	case 0:
		r = uw_sort(rng);
		break;
	case 1:
		r = uw_map(rng);
		break;
	default:
		r = uw_format(rng);
		break;
	}
	BARRIER();
	return r + round;
}

NOINLINE uint64_t uw_level2(std::mt19937 &rng, unsigned round)
{
	uint64_t r = uw_level3(rng, round);

	BARRIER();
	return r * 3;
}

NOINLINE uint64_t uw_level1(std::mt19937 &rng, unsigned round)
{
	uint64_t r = uw_level2(rng, round);

	BARRIER();
	return r ^ 0x5a5a;
}

NOINLINE void uw_spin(unsigned seed)
{
	std::mt19937 rng(seed);
	unsigned round = 0;

	while (std::chrono::steady_clock::now() < deadline)
		sink.fetch_add(uw_level1(rng, round++), std::memory_order_relaxed);
	BARRIER();
}

NOINLINE void uw_thread(unsigned seed)
{
	uw_spin(seed);
	BARRIER();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SECONDS [THREADS]\n", argv[0]);
		return 2;
	}
	double seconds = atof(argv[1]);
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	std::vector<std::thread> ts;

	deadline = std::chrono::steady_clock::now() +
		   std::chrono::milliseconds((long long)(seconds * 1000));
	for (int i = 1; i < threads; i++)
		ts.emplace_back(uw_thread, 1000u + i);
	uw_spin(1000u);
	for (auto &t : ts)
		t.join();
	printf("%llu\n", (unsigned long long)sink.load());
	return 0;
}
