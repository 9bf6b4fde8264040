/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_KALLSYMS_H
#define AUTOPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's symbols from /proc/kallsyms (text symbols only), sorted for lookup. */
struct kallsyms;

/* path NULL means /proc/kallsyms. Returns 0 or a negative errno; -EPERM when every address
 * reads as 0 (kptr_restrict). */
int kallsyms__load(const char *path, struct kallsyms **out);
void kallsyms__free(struct kallsyms *ks);	/* accepts NULL */
/*
 * The symbol containing addr, or NULL. *module gets the module name ("ext4") or NULL for the
 * core kernel. Strings are owned by ks; the name stays valid until the next lookup (names are
 * kept compressed, and inflated a block at a time). Lookups change ks: the caller serializes
 * them.
 */
const char *kallsyms__lookup(struct kallsyms *ks, uint64_t addr, uint64_t *sym_start,
			     const char **module);
size_t kallsyms__nr_symbols(const struct kallsyms *ks);
size_t kallsyms__bytes(const struct kallsyms *ks);

#endif
