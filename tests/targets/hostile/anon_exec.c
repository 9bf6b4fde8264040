// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs code from an anonymous executable page, as a JIT does, so that its samples make autoprof
 * look for /tmp/perf-PID.map. Prints its pid, waits for a line on stdin (the test plants what it
 * wants at that path first), then spins in the page until killed.
 */
#include <string.h>
#include <sys/mman.h>

#include "target.h"

int main(void)
{
	/* jmp . : a loop of one instruction, nothing else to name in the page. */
	static const unsigned char spin[] = { 0xeb, 0xfe };
	void (*fn)(void);
	void *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, spin, sizeof(spin));
	if (!target_start(true))
		return 0;
	fn = (void (*)(void))page;
	fn();
	return 0;
}
