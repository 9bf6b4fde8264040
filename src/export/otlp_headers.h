/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_OTLP_HEADERS_H
#define AUTOPROF_OTLP_HEADERS_H

#include <stddef.h>

#include "export/otlp_push.h"

/* A headers file is a few tokens; the cap keeps --otlp.headers-file=/dev/zero from hanging. */
#define OTLP_HEADERS_FILE_MAX (64 * 1024)

/*
 * Reads path's request headers, one "Name: value" a line (blank lines and lines starting with
 * '#' are skipped), so that tokens stay out of the command line. On success *text is a copy of
 * the file the caller frees, and *hdrs (caller frees; NULL when there are none) holds *nr pairs
 * pointing into it. Otherwise a negative errno, with the reason (and line) in why.
 */
int otlp_headers__read_file(const char *path, char **text, struct otlp_header **hdrs, size_t *nr,
			    char *why, size_t why_size);

#endif
