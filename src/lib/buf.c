// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/buf.h"

int buf__reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap;
	char *p;

	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf__append(struct buf *b, const void *p, size_t n)
{
	if (buf__reserve(b, n))
		return -ENOMEM;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf__puts(struct buf *b, const char *s)
{
	return buf__append(b, s, strlen(s));
}

int buf__printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (buf__reserve(b, (size_t)n))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void buf__reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void buf__free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int buf__gzip(const void *in, size_t len, struct buf *out)
{
	z_stream zs = { 0 };
	int ret;

	/* 16 + MAX_WBITS selects the gzip wrapper that pprof readers expect. */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	if (buf__reserve(out, deflateBound(&zs, len) + 32)) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = len;
	zs.next_out = (Bytef *)out->data + out->len;
	zs.avail_out = out->cap - out->len - 1;
	ret = deflate(&zs, Z_FINISH);
	if (ret != Z_STREAM_END) {
		deflateEnd(&zs);
		return -EIO;
	}
	out->len += zs.total_out;
	out->data[out->len] = '\0';
	deflateEnd(&zs);
	return 0;
}
