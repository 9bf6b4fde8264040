/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LOG_H
#define AUTOPROF_LOG_H

/*
 * Logging. Each .c file defines pr_fmt() before including this header to prefix its subsystem:
 *   #define pr_fmt(fmt) "store: " fmt
 */
enum log_level {
	LOG_ERROR = 0,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

void log__set_level(enum log_level level);
enum log_level log__level(void);
/* Parses "error", "warn", "info", "debug". Returns 0 or -EINVAL. */
int log__parse_level(const char *s, enum log_level *out);
const char *log__level_name(enum log_level level);
void log__printf(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

#define pr_err(fmt, ...)   log__printf(LOG_ERROR, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)  log__printf(LOG_WARN, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)  log__printf(LOG_INFO, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_debug(fmt, ...) log__printf(LOG_DEBUG, pr_fmt(fmt), ##__VA_ARGS__)

#endif
