/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_TRACECTX_ABI_H
#define AUTOPROF_BPF_TRACECTX_ABI_H

/*
 * Shared between bpf/tracectx.bpf.h and src/runtime/tracectx.c: __u16/__u32/__s64 only, no
 * libc. One value per process in tracectx_offsets: where and how its threads publish the span
 * they run in.
 */

enum tracectx_kind {
	/* OTEP 4947: a pointer to a record at fsbase + tp_offset (0: what a bare offset meant). */
	TRACECTX_OTEP = 0,
	/* Elastic APM correlation: a pointer at fsbase + tp_offset to its packed record. */
	TRACECTX_ELASTIC = 1,
	/* Go pprof labels: the g pointer at fsbase + tp_offset, labels in a map[string]string. */
	TRACECTX_GO_MAP = 2,
};

struct tracectx_loc {
	__s64 tp_offset;	/* from the thread pointer (fsbase), negative in static TLS */
	__u32 kind;		/* enum tracectx_kind */
	/* TRACECTX_GO_MAP: offsets in the runtime's structs of this Go version. */
	__u16 go_g_m;		/* runtime.g.m */
	__u16 go_m_curg;	/* runtime.m.curg */
	__u16 go_g_labels;	/* runtime.g.labels: a *labelMap (map[string]string) */
	__u16 pad[3];
};

/* Elastic APM's record (elastic_apm_profiling_correlation_tls_v1), packed. */
#define TRACECTX_ELASTIC_MINOR 0	/* u16 layout_minor_version, 1 today */
#define TRACECTX_ELASTIC_VALID 2	/* u8, 1 = the record may be read */
#define TRACECTX_ELASTIC_PRESENT 3	/* u8, 1 = a trace is active */
#define TRACECTX_ELASTIC_TRACE_ID 5	/* u8[16] */
#define TRACECTX_ELASTIC_SPAN_ID 21	/* u8[8] */
#define TRACECTX_ELASTIC_SIZE 29	/* what a sampler reads: up to the span id */

#endif
