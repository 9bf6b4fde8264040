// SPDX-License-Identifier: GPL-2.0-only
/* otel_thread_ctx_v1 defined in the main executable (local-exec), exported in .dynsym. */
#include "tctx_common.h"

__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

static void ctx_publish(struct otel_thread_ctx *rec)
{
	otel_thread_ctx_v1 = rec;
}

static long ctx_tpoff(void)
{
	return (char *)&otel_thread_ctx_v1 - (char *)__builtin_thread_pointer();
}
