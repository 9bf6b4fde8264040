// SPDX-License-Identifier: GPL-2.0-only
/*
 * For unit tests that link src/query/query.c and src/daemon/params.c without the collectors or
 * the history: no memory or GPU memory profiling (no live rows) and nothing on disk. The
 * queries never reach these with sources that hold none of them; they are here for the linker.
 */
#include <errno.h>

#include "gpu/gpumem.h"
#include "history/history.h"
#include "memory/memory.h"

int memory__live_rows(struct memory *m, const struct store_filter *filter, struct store_row **out,
		      size_t *nr)
{
	(void)m;
	(void)filter;
	*out = NULL;
	*nr = 0;
	return 0;
}

uint64_t memory__mean_interval(const struct memory *m)
{
	(void)m;
	return 0;
}

int gpumem__live_rows(struct gpumem *g, const struct store_filter *filter, struct store_row **out,
		      size_t *nr)
{
	(void)g;
	(void)filter;
	*out = NULL;
	*nr = 0;
	return 0;
}

int history__rows(struct history *h, enum profile_type type, uint64_t start_ns, uint64_t end_ns,
		  const struct store_filter *filter, struct history_rows **out)
{
	(void)h;
	(void)type;
	(void)start_ns;
	(void)end_ns;
	(void)filter;
	*out = NULL;
	return -ENOSYS;
}

void history_rows__free(struct history_rows *hr)
{
	(void)hr;
}

uint64_t history__written_until(struct history *h)
{
	(void)h;
	return 0;
}

uint64_t history__retention_ns(const struct history *h)
{
	(void)h;
	return 0;
}
