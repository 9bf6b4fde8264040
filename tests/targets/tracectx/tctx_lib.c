// SPDX-License-Identifier: GPL-2.0-only
/* otel_thread_ctx_v1 defined in libtctx.so (TLSDESC), a library linked at start. */
#include "tctx_common.h"

void tctx_publish(void *rec);
long tctx_tpoff(void);

static void ctx_publish(struct otel_thread_ctx *rec)
{
	tctx_publish(rec);
}

static long ctx_tpoff(void)
{
	return tctx_tpoff();
}
