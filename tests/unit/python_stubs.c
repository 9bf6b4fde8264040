// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stand-ins for python.c's collaborators (the process table, the unwinder, the symbolizer,
 * /proc/PID/maps, dsos) in the programs that test python.c alone: its unit test and its fuzz
 * target, which reach none of them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/runtime/python.h"
#include "src/symbolize/frame.h"
#include "symbolize/dso.h"
#include "src/lib/procmaps.h"
#include "src/proc/proctab.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"

uint32_t proc__maps_generation(const struct proc *p)
{
	(void)p;
	return 0;
}
const struct proc_map *proc__maps(const struct proc *p, uint32_t *n)
{
	(void)p;
	*n = 0;
	return NULL;
}
void unwinder__set_proc_flag(struct unwinder *u, uint32_t pid, uint32_t flag)
{
	(void)u, (void)pid, (void)flag;
}
int symbolizer__interp_frame(struct symbolizer *sym, const char *function, const char *file,
			     uint32_t line, struct frame *out)
{
	(void)sym, (void)function, (void)file, (void)line, (void)out;
	return -ENOSYS;
}
int maps__for_each(int pid, bool exec_only, int (*fn)(const struct map_entry *e, void *ctx),
		   void *ctx)
{
	(void)pid, (void)exec_only, (void)fn, (void)ctx;
	return -ENOSYS;
}
int maps__open_file(int pid, const struct map_entry *e)
{
	(void)pid, (void)e;
	return -ENOSYS;
}
enum dso_kind dso__kind(const struct dso *dso)
{
	(void)dso;
	return DSO_UNKNOWN;
}
const char *dso__path(const struct dso *dso)
{
	(void)dso;
	return "";
}

int proctab__observe(struct proctab *pt, const struct proc_observer *o)
{
	(void)pt;
	(void)o;
	return 0;
}

struct proc *proctab__find(struct proctab *pt, uint32_t pid)
{
	(void)pt;
	(void)pid;
	return NULL;
}

bool proc__new_image(const struct proc *p)
{
	(void)p;
	return false;
}
