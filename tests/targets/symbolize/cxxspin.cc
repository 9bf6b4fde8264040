// SPDX-License-Identifier: GPL-2.0-only
/* A function template in a namespace, instantiated for int and kept out of line: the profile
 * must name it demangled, with the mangled name as the system name.
 *   sym_cxx SECONDS */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>

static volatile int sink;

namespace app {
template <typename T> __attribute__((noinline)) T spin(T x)
{
	for (int i = 0; i < 1000000; i++)
		x = x * 1103515245 + sink;
	return x;
}
} // namespace app

static double now()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 2);

	std::printf("%d\n", (int)getpid());
	std::fflush(stdout);
	while (now() < end)
		sink = app::spin<int>(sink);
	return 0;
}
