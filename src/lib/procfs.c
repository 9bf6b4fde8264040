// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/procfs.h"

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

int procfs__ids(uint32_t pid, uid_t *euid, int *nspid)
{
	char path[64], line[256];
	unsigned int real, eff;
	int found = 0;
	FILE *f;

	*nspid = (int)pid;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (found != 3 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %u %u", &real, &eff) == 2) {
			*euid = (uid_t)eff;
			found |= 1;
		} else if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');

			*nspid = last ? atoi(last + 1) : (int)pid;
			found |= 2;
		}
	}
	fclose(f);
	return found & 1 ? 0 : -ESRCH;
}
