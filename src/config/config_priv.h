/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_CONFIG_PRIV_H
#define AUTOPROF_CONFIG_PRIV_H

/*
 * Shared by the configuration's two halves: src/config/keytypes.c (how each kind of value is
 * parsed, bounded, stored and written back) and src/config/config.c (the table of keys, the
 * YAML file, the flags). Nothing outside src/config/ includes this.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/timeconst.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

struct key;

/*
 * How one kind of value is read, stored and written back. Numeric kinds parse into a uint64_t
 * that is bounds-checked and stored by field size; the string kind copies into a char array.
 */
struct key_type {
	const char *metavar;	/* in --help: --KEY=<metavar> */
	bool bounded;		/* min/max apply and are shown in --help */
	bool quoted;		/* printed as a YAML double-quoted string */
	int (*set)(const struct key *k, void *field, const char *s, char *why, size_t n);
	void (*get)(const struct key *k, const void *field, char *out, size_t n);
	/* Numeric kinds only. */
	int (*parse)(const char *s, uint64_t *v);
	void (*format)(uint64_t v, char *out, size_t n);
	const char *invalid;	/* reason when parse fails, %s is the value */
	/* 0 is a word's ("auto": autoprof chooses), not a number: outside the bounds. */
	bool zero_is_word;
};

enum key_flags {
	KEY_FLAG_ONLY = 1 << 0, /* not accepted in the YAML file */
	KEY_EARLY = 1 << 1,	/* applied in the first flag pass, before the file is read */
};

struct key {
	const char *name;
	const struct key_type *type;
	const char *def;
	uint64_t min, max;
	/* Extra validation after parsing and bounds: s is the text, v the parsed number. */
	int (*check)(const char *s, uint64_t v, char *why, size_t n);
	size_t off, size;
	unsigned int flags;
	const char *help;
};

/* The kinds of value a key can have (keytypes.c). */
extern const struct key_type config_type_string, config_type_path, config_type_uint,
	config_type_duration, config_type_bytes, config_type_bytes_auto, config_type_level,
	config_type_unwind_mode, config_type_bool, config_type_ratio;

/* Decimal digits only, no sign, no unit, no overflow. 0 or -EINVAL/-ERANGE. */
int config__parse_uint(const char *s, uint64_t *v);

/*
 * Checks of particular keys (keytypes.c), the table's .check: s is the text, v the parsed
 * number. 0, or -EINVAL with the reason in why.
 */
int listen_address__check(const char *s, uint64_t v, char *why, size_t n);
int otlp_endpoint__check(const char *s, uint64_t v, char *why, size_t n);
int otlp_headers__check(const char *s, uint64_t v, char *why, size_t n);
int otlp_headers_file__check(const char *s, uint64_t v, char *why, size_t n);
int readable_file__check(const char *s, uint64_t v, char *why, size_t n);
int memory_targets__check(const char *s, uint64_t v, char *why, size_t n);
int probes__check_list(const char *s, uint64_t v, char *why, size_t n);
int ringbuf_size__check(const char *s, uint64_t v, char *why, size_t n);

#endif
