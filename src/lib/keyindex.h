/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LIB_KEYINDEX_H
#define AUTOPROF_LIB_KEYINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Dense ids for fixed-size keys compared as bytes (pad keys with zeroes): the first key gets
 * 0, the next new one 1, and so on. The index owns a copy of each key, in id order. Zero-
 * initialise with key_size set; keyindex__free releases it.
 */
struct keyindex {
	size_t key_size;
	void *keys; /* nr keys of key_size bytes, in id order */
	uint32_t nr, cap;
	uint32_t *slots; /* open addressing: id + 1, 0 = empty */
	uint32_t mask;
};

/* The id of key, made if new (*added says which; added may be NULL): >= 0, or -ENOMEM. */
int64_t keyindex__id(struct keyindex *ki, const void *key, bool *added);
/* The key of id (< nr), borrowed until the next keyindex__id. */
static inline const void *keyindex__key(const struct keyindex *ki, uint32_t id)
{
	return (const char *)ki->keys + (size_t)id * ki->key_size;
}
void keyindex__free(struct keyindex *ki);

#endif
