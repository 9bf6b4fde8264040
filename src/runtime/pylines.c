// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython's line tables: which source line an instruction offset of a code object is on, from
 * co_linetable (3.11+: location entries with varints) or co_lnotab-style pairs (3.10). Pure
 * functions over bytes read from the process (any value), bounds-checked; see python.h.
 */
#include <stdint.h>

#include "runtime/python.h"

/* 3.11+ varints: 6 bits a byte, low first, 0x40 = more. */
static uint32_t lt_varint(const uint8_t *t, uint32_t len, uint32_t *i)
{
	uint32_t v = 0, shift = 0;

	while (*i < len && shift < 32) {
		uint8_t b = t[(*i)++];

		v |= (uint32_t)(b & 0x3f) << shift;
		shift += 6;
		if (!(b & 0x40))
			break;
	}
	return v;
}

static int32_t lt_svarint(const uint8_t *t, uint32_t len, uint32_t *i)
{
	uint32_t v = lt_varint(t, len, i);

	return v & 1 ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

uint32_t python__line_311(const uint8_t *t, uint32_t len, uint32_t first_line, uint32_t idx)
{
	int64_t line = first_line;
	uint32_t i = 0, unit = 0;

	while (i < len) {
		uint8_t b = t[i++];
		uint32_t code = b >> 3 & 15, n = (b & 7) + 1;
		int64_t delta = 0;
		bool has_line = true;

		if (!(b & 0x80))
			break; /* not at an entry's first byte: a corrupt table */
		if (code == 15) {
			has_line = false;
		} else if (code == 14) {
			delta = lt_svarint(t, len, &i);
			lt_varint(t, len, &i);
			lt_varint(t, len, &i);
			lt_varint(t, len, &i);
		} else if (code == 13) {
			delta = lt_svarint(t, len, &i);
		} else if (code >= 10) {
			delta = code - 10;
			i += 2;
		} else {
			i += 1;
		}
		line += delta;
		if (idx < unit + n)
			return has_line && line > 0 ? (uint32_t)line : first_line;
		unit += n;
	}
	return first_line;
}

uint32_t python__line_310(const uint8_t *t, uint32_t len, uint32_t first_line, uint32_t idx)
{
	int64_t line = first_line;
	uint32_t start = 0, addr = idx * 2;

	for (uint32_t i = 0; i + 1 < len; i += 2) {
		uint32_t end = start + t[i];
		int8_t ldelta = (int8_t)t[i + 1];

		if (ldelta != -128)
			line += ldelta;
		if (addr >= start && addr < end)
			return ldelta != -128 && line > 0 ? (uint32_t)line : first_line;
		start = end;
	}
	return first_line;
}

/* The line of a pair's instruction in its code object c (read from code). */
