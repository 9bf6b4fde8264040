// SPDX-License-Identifier: GPL-2.0-only
#include "_cgo_export.h"

__attribute__((noinline)) static unsigned long c_leaf(unsigned long n)
{
	unsigned long x = n;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

unsigned long c_hot(unsigned long n)
{
	unsigned long r = c_leaf(n);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

unsigned long c_calls_go(unsigned long n)
{
	unsigned long r = goBack(n);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}
