/* DEPS: src/lib/bpfmap.c */
// SPDX-License-Identifier: GPL-2.0-only
/* bpfmap__delete_pid on a real BPF hash: a process's keys go, the others stay. */
#include <stdint.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/bpfmap.h"
#include "testlib.h"

struct key {
	uint32_t pid, pad;
	uint64_t x;
};

TEST(delete_pid_keeps_the_others)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t", sizeof(struct key), sizeof(uint32_t), 4096,
				NULL);
	struct key k = { 0 }, next, *prev = NULL;
	uint32_t v = 1, left[3] = { 0 };

	if (fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	for (uint32_t i = 0; i < 3000; i++) {
		k = (struct key){ .pid = 1 + i % 3, .x = i };
		CHECK_EQ(bpf_map_update_elem(fd, &k, &v, BPF_ANY), 0);
	}
	bpfmap__delete_pid(fd, sizeof(struct key), 2);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		left[next.pid - 1]++;
		k = next;
		prev = &k;
	}
	CHECK_EQ(left[0], 1000);
	CHECK_EQ(left[1], 0);
	CHECK_EQ(left[2], 1000);
	close(fd);
}

int main(void)
{
	RUN(delete_pid_keeps_the_others);
	return test_summary();
}
