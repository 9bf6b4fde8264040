// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "lib/timeconst.h"

static enum log_level cur_level = LOG_INFO;

static const char *const level_names[] = {
	[LOG_ERROR] = "error",
	[LOG_WARN] = "warn",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

void log__set_level(enum log_level level)
{
	cur_level = level;
}

enum log_level log__level(void)
{
	return cur_level;
}

const char *log__level_name(enum log_level level)
{
	return level <= LOG_DEBUG ? level_names[level] : "?";
}

int log__parse_level(const char *s, enum log_level *out)
{
	for (unsigned int i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (!strcmp(s, level_names[i])) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

void log__printf(enum log_level level, const char *fmt, ...)
{
	char ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;

	if (level > cur_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ %-5s ", ts, now.tv_nsec / (long)NSEC_PER_MSEC,
		level_names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
