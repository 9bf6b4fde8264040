// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stands in for Elastic's Java agent library (elastic-jvmti-linux-x86_64.so): the TLSDESC
 * thread-local elastic_apm_profiling_correlation_tls_v1 pointing at the thread's correlation
 * record, which a profiler reads to link samples to the active transaction.
 */
#include <stddef.h>

__attribute__((visibility("default"))) __thread void *elastic_apm_profiling_correlation_tls_v1;

void elastic_publish(void *rec)
{
	elastic_apm_profiling_correlation_tls_v1 = rec;
}

/* Computed here, through the library's own access sequence: the offset a reader must find. */
long elastic_tpoff(void)
{
	return (char *)&elastic_apm_profiling_correlation_tls_v1 -
	       (char *)__builtin_thread_pointer();
}
