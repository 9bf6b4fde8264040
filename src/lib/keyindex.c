// SPDX-License-Identifier: GPL-2.0-only
/* Dense ids for fixed-size keys: see keyindex.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/keyindex.h"

static int keyindex__grow(struct keyindex *ki)
{
	uint32_t mask = ki->mask ? 2 * ki->mask + 1 : 1023;
	uint32_t *slots = calloc((size_t)mask + 1, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < ki->nr; i++) {
		uint32_t s = hash__bytes(keyindex__key(ki, i), ki->key_size, 0) & mask;

		while (slots[s])
			s = (s + 1) & mask;
		slots[s] = i + 1;
	}
	free(ki->slots);
	ki->slots = slots;
	ki->mask = mask;
	return 0;
}

int64_t keyindex__id(struct keyindex *ki, const void *key, bool *added)
{
	uint32_t s;

	if (added)
		*added = false;
	if (2 * ((uint64_t)ki->nr + 1) > ki->mask) {
		if (ki->nr >= UINT32_MAX / 4 || keyindex__grow(ki))
			return -ENOMEM;
	}
	for (s = hash__bytes(key, ki->key_size, 0) & ki->mask; ki->slots[s];
	     s = (s + 1) & ki->mask)
		if (!memcmp(keyindex__key(ki, ki->slots[s] - 1), key, ki->key_size))
			return ki->slots[s] - 1;
	if (ki->nr == ki->cap) {
		uint32_t cap = ki->cap ? 2 * ki->cap : 256;
		void *keys = realloc(ki->keys, (size_t)cap * ki->key_size);

		if (!keys)
			return -ENOMEM;
		ki->keys = keys;
		ki->cap = cap;
	}
	memcpy((char *)ki->keys + (size_t)ki->nr * ki->key_size, key, ki->key_size);
	ki->slots[s] = ++ki->nr;
	if (added)
		*added = true;
	return ki->nr - 1;
}

void keyindex__free(struct keyindex *ki)
{
	free(ki->keys);
	free(ki->slots);
	ki->keys = NULL;
	ki->slots = NULL;
	ki->nr = ki->cap = ki->mask = 0;
}
