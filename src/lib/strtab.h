/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_STRTAB_H
#define AUTOPROF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/*
 * A string interning table: each distinct string gets a dense index, "" is always index 0
 * (the shape of pprof's and OTLP's string tables). The table owns copies of its strings.
 */
struct strtab;

struct strtab *strtab__new(void);
void strtab__free(struct strtab *st);
/* Returns the string's index (>= 0) or -ENOMEM. NULL interns as "". */
int64_t strtab__intern(struct strtab *st, const char *s);
int64_t strtab__intern_n(struct strtab *st, const char *s, size_t n);
uint32_t strtab__count(const struct strtab *st);
const char *strtab__str(const struct strtab *st, uint32_t idx);
/* Array of strtab__count() pointers, owned by the table, valid until the next intern. */
char **strtab__array(const struct strtab *st);

#endif
