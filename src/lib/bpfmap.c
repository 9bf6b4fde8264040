// SPDX-License-Identifier: GPL-2.0-only
/* BPF map chores several modules share: bpfmap.h. */
#include <string.h>

#include <bpf/bpf.h>

#include "lib/bpfmap.h"

#define KEY_MAX 64

static uint32_t key_pid(const unsigned char *key)
{
	uint32_t pid;

	memcpy(&pid, key, sizeof(pid));
	return pid;
}

void bpfmap__delete_pid(int map_fd, size_t key_size, uint32_t pid)
{
	unsigned char key[KEY_MAX], next[KEY_MAX];
	const void *prev = NULL;

	if (key_size > KEY_MAX || key_size < sizeof(pid))
		return;
	/* Deleting the key just stepped past keeps the walk's place in the map. */
	while (!bpf_map_get_next_key(map_fd, prev, next)) {
		if (prev && key_pid(key) == pid)
			bpf_map_delete_elem(map_fd, key);
		memcpy(key, next, key_size);
		prev = key;
	}
	if (prev && key_pid(key) == pid)
		bpf_map_delete_elem(map_fd, key);
}
