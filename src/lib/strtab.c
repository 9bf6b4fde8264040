// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/strtab.h"

struct strtab {
	char **strs;
	uint32_t nr, cap;
	/* Open-addressing index into strs, 0 = empty, otherwise idx + 1. */
	uint32_t *slots;
	uint32_t nr_slots;
};

static int strtab__grow_slots(struct strtab *st)
{
	uint32_t n = st->nr_slots ? st->nr_slots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < st->nr; i++) {
		uint64_t h = hash__bytes(st->strs[i], strlen(st->strs[i]), 0);
		uint32_t j = h & (n - 1);

		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = i + 1;
	}
	free(st->slots);
	st->slots = slots;
	st->nr_slots = n;
	return 0;
}

struct strtab *strtab__new(void)
{
	struct strtab *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	if (strtab__intern(st, "") != 0) {
		strtab__free(st);
		return NULL;
	}
	return st;
}

void strtab__free(struct strtab *st)
{
	if (!st)
		return;
	for (uint32_t i = 0; i < st->nr; i++)
		free(st->strs[i]);
	free(st->strs);
	free(st->slots);
	free(st);
}

int64_t strtab__intern_n(struct strtab *st, const char *s, size_t n)
{
	uint64_t h;
	uint32_t j;
	char *copy;

	if (!s)
		n = 0, s = "";
	if ((st->nr + 1) * 2 > st->nr_slots && strtab__grow_slots(st))
		return -ENOMEM;
	h = hash__bytes(s, n, 0);
	for (j = h & (st->nr_slots - 1); st->slots[j]; j = (j + 1) & (st->nr_slots - 1)) {
		const char *e = st->strs[st->slots[j] - 1];

		if (!strncmp(e, s, n) && e[n] == '\0')
			return st->slots[j] - 1;
	}
	if (st->nr == st->cap) {
		uint32_t cap = st->cap ? st->cap * 2 : 64;
		char **strs = realloc(st->strs, cap * sizeof(*strs));

		if (!strs)
			return -ENOMEM;
		st->strs = strs;
		st->cap = cap;
	}
	copy = strndup(s, n);
	if (!copy)
		return -ENOMEM;
	st->strs[st->nr] = copy;
	st->slots[j] = ++st->nr;
	return st->nr - 1;
}

int64_t strtab__intern(struct strtab *st, const char *s)
{
	return strtab__intern_n(st, s, s ? strlen(s) : 0);
}

uint32_t strtab__count(const struct strtab *st)
{
	return st->nr;
}

const char *strtab__str(const struct strtab *st, uint32_t idx)
{
	return idx < st->nr ? st->strs[idx] : "";
}

char **strtab__array(const struct strtab *st)
{
	return st->strs;
}
