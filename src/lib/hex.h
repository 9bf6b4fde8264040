/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_HEX_H
#define AUTOPROF_HEX_H

#include <stddef.h>
#include <stdint.h>

/* n bytes as 2n lower-case hex digits and a NUL (trace and span ids, build ids). */
static inline void hex__encode(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The value of a hex digit (either case), or -1. */
static inline int hex__digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

#endif
