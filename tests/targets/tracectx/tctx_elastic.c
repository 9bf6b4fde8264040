// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Elastic APM correlation record published from elastic-jvmti-linux-x86_64.so (TLSDESC),
 * a library linked at start: the spans of tctx_common.h, translated into Elastic's layout.
 */
#include "tctx_common.h"

void elastic_publish(void *rec);
long elastic_tpoff(void);

/* Packed, host endian (the OpenTelemetry thread-context proposal). */
struct elastic_rec {
	uint16_t layout_minor_version;
	uint8_t valid;
	uint8_t trace_present;
	uint8_t trace_flags;
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t transaction_id[8];
} __attribute__((packed));

_Static_assert(sizeof(struct elastic_rec) == 37, "the record is 37 bytes");

/* Two records per thread, written in turn, so a stopped thread shows one span whole. */
static __thread struct elastic_rec recs[2];
static __thread int cur;

/*
 * NULL (no span) still publishes a valid record, with no trace present: what the agent does
 * between transactions.
 */
static void ctx_publish(struct otel_thread_ctx *span)
{
	struct elastic_rec *rec = &recs[cur ^ 1];

	rec->valid = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec->layout_minor_version = 1;
	rec->trace_present = span != NULL;
	rec->trace_flags = span ? span->trace_flags : 0;
	memset(rec->trace_id, 0, sizeof(rec->trace_id));
	memset(rec->span_id, 0, sizeof(rec->span_id));
	if (span) {
		memcpy(rec->trace_id, span->trace_id, sizeof(rec->trace_id));
		memcpy(rec->span_id, span->span_id, sizeof(rec->span_id));
		memcpy(rec->transaction_id, span->span_id, sizeof(rec->transaction_id));
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec->valid = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	elastic_publish(rec);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cur ^= 1;
}

static long ctx_tpoff(void)
{
	return elastic_tpoff();
}
