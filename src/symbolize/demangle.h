/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_DEMANGLE_H
#define AUTOPROF_DEMANGLE_H

/*
 * Demangled C++ (Itanium, "_Z...") and Rust (legacy "_ZN...17h<hash>E" and v0 "_R...") names;
 * NULL when sym is not mangled or not understood. Caller frees. Thread-safe.
 *
 * C++ names keep their parameter lists (overloads differ only there). Rust names lose the legacy
 * "::h<16 hex>" hash and the v0 crate disambiguators, as in rustc-demangle's alternate format
 * ("{:#}"): both only tell builds of one function apart, and keeping them would split that
 * function into several in a profile merged across versions.
 */
char *demangle__symbol(const char *sym);

#endif
