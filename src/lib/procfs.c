// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>

#include "procfs.h"

unsigned long long procfs__start_ticks(uint32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks = 0;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fgets(buf, sizeof(buf), f) ? 1 : 0;
	fclose(f);
	/* Field 22, counted after the command name (which may hold spaces and parentheses). */
	p = n ? strrchr(buf, ')') : NULL;
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 &ticks) != 1)
		return 0;
	return ticks;
}
