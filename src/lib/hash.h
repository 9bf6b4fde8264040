/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_HASH_H
#define AUTOPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a followed by a murmur finaliser: cheap, and good enough for open addressing. */
static inline uint64_t hash__bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static inline uint64_t hash__u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
