// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "demangle: " fmt

#include <ctype.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "symbolize/demangle.h"

/*
 * libiberty's Itanium demangler keeps its parse tree in variable-length arrays on the stack,
 * about 72 bytes per input byte: longer names (rare even in heavy template code) stay mangled
 * rather than risk the stack of whichever thread symbolizes.
 */
#define DEMANGLE_MAX_LEN (16u << 10)

/*
 * DMGL_PARAMS for C++ parameter lists, DMGL_ANSI for const/volatile. Not DMGL_VERBOSE, which
 * c++filt uses: it spells std::string as std::basic_string<char, ...> and keeps the Rust legacy
 * hash and v0 crate disambiguators, all noise in a flame graph.
 */
#define DEMANGLE_OPTS (DMGL_PARAMS | DMGL_ANSI)

/* "17h" + 16 hex digits + "E": the hash path segment that ends a Rust legacy symbol. */
#define RUST_HASH_DIGITS 16

/*
 * The legacy hash of sym ("0123456789abcdef"), or NULL. A ".suffix" LLVM or the linker added
 * (.llvm.NNN, .cold) may follow the closing 'E'.
 */
static const char *rust_legacy__hash(const char *sym)
{
	const char *end = strchr(sym, '.');
	size_t len = end ? (size_t)(end - sym) : strlen(sym);
	const char *h;

	if (strncmp(sym, "_ZN", 3) || len < 3 + 3 + RUST_HASH_DIGITS + 1 || sym[len - 1] != 'E')
		return NULL;
	h = sym + len - 1 - RUST_HASH_DIGITS - 3;
	if (memcmp(h, "17h", 3))
		return NULL;
	for (int i = 0; i < RUST_HASH_DIGITS; i++) {
		if (!isxdigit((unsigned char)h[3 + i]))
			return NULL;
	}
	return h + 3;
}

/*
 * libiberty takes a legacy symbol as Rust only when its hash looks random enough; otherwise the
 * Itanium demangler reads it as "a::b::h0123..." and the hash is cut off here, as rustc-demangle
 * does for any 16-digit hex hash.
 */
static void rust_legacy__strip_hash(char *name, const char *hash)
{
	size_t len = strlen(name), tail = 3 + RUST_HASH_DIGITS;

	if (len > tail && !memcmp(name + len - tail, "::h", 3) &&
	    !strncasecmp(name + len - RUST_HASH_DIGITS, hash, RUST_HASH_DIGITS))
		name[len - tail] = '\0';
}

char *demangle__symbol(const char *sym)
{
	const char *hash;
	char *name;

	if (!sym || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return NULL;
	if (strnlen(sym, DEMANGLE_MAX_LEN + 1) > DEMANGLE_MAX_LEN) {
		pr_debug("not demangling a %zu-byte name\n", strlen(sym));
		return NULL;
	}
	/*
	 * Rust first: legacy Rust names are valid Itanium names too, and only the Rust demangler
	 * decodes their $LT$-style escapes and drops the hash. Both functions are called directly
	 * rather than through cplus_demangle(), which consults libiberty's global style variable.
	 */
	name = rust_demangle(sym, DEMANGLE_OPTS);
	if (name || sym[1] == 'R')
		return name;
	name = cplus_demangle_v3(sym, DEMANGLE_OPTS);
	if (name && (hash = rust_legacy__hash(sym)))
		rust_legacy__strip_hash(name, hash);
	return name;
}
