/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BUF_H
#define AUTOPROF_BUF_H

#include <stddef.h>

/* A growable byte buffer. Zero-initialise; the buffer owns data; buf__free releases it. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
};

/* Each returns 0 or -ENOMEM. data stays NUL-terminated after any successful append. */
int buf__reserve(struct buf *b, size_t extra);
int buf__append(struct buf *b, const void *p, size_t n);
int buf__puts(struct buf *b, const char *s);
int buf__printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf__reset(struct buf *b);
void buf__free(struct buf *b);
/* Gzip-compresses in into out (out is appended to). Returns 0, -ENOMEM or -EIO. */
int buf__gzip(const void *in, size_t len, struct buf *out);

#endif
