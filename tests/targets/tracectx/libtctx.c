// SPDX-License-Identifier: GPL-2.0-only
/*
 * otel_thread_ctx_v1 defined in a shared library built with -mtls-dialect=gnu2: the library
 * reaches its own variable through a TLSDESC GOT pair, as an SDK following OTEP 4947 would.
 */
#include <stddef.h>

__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

void tctx_publish(void *rec)
{
	otel_thread_ctx_v1 = rec;
}

/* Computed here, through the library's own access sequence: the offset a reader must find. */
long tctx_tpoff(void)
{
	return (char *)&otel_thread_ctx_v1 - (char *)__builtin_thread_pointer();
}
