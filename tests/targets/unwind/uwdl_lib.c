// SPDX-License-Identifier: GPL-2.0-only
/*
 * libuwdl.so, loaded by uw_dlopen with dlopen after its start: its CFI is in a file the process
 * did not map at exec. dl_entry → dl_leaf; -fomit-frame-pointer.
 */
#include <stdint.h>

__attribute__((noinline, noipa)) uint64_t dl_leaf(uint64_t x)
{
	for (uint64_t i = 0; i < 1000000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL; /* HOT */
		asm volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline, noipa)) uint64_t dl_entry(uint64_t a)
{
	uint64_t v0 = a * 3, v1 = a ^ 0x55, v2 = a + 11, v3 = a * 7, r;

	asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3));
	r = dl_leaf(a);
	asm volatile("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3) : : "memory");
	return r + v0 * v1 + v2 * v3;
}
