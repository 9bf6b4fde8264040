/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_SAMPLE_PROCCPU_H
#define AUTOPROF_SAMPLE_PROCCPU_H

#include <stdint.h>

struct metrics_writer;

/*
 * CPU time per live process as the samplers saw it, with the most recent sample taken inside a
 * span: /metrics shows autoprof_process_cpu_seconds_total{pid,exe} and, in OpenMetrics, that
 * span as the counter's exemplar, so Grafana jumps from a process's CPU to the trace.
 * Written by the ingest thread, read by HTTP threads.
 */
struct proccpu;

struct proccpu *proccpu__new(void);
void proccpu__free(struct proccpu *pc); /* accepts NULL */
/* trace_id (16 bytes) and span_id (8) may be NULL. realtime_ns: when the sample was taken. */
void proccpu__add(struct proccpu *pc, uint32_t pid, const char *exe, uint64_t cpu_ns,
		  const uint8_t *trace_id, const uint8_t *span_id, uint64_t realtime_ns);
void proccpu__exit(struct proccpu *pc, uint32_t pid);
struct proctab;
/* Listens to processes' lives (proc/proctab.h): an exited process's account is closed. */
int proccpu__observe(struct proccpu *pc, struct proctab *pt);
/* Writes the family (a metrics callback: ctx is the proccpu). */
void proccpu__metrics(struct metrics_writer *w, void *ctx);

#endif
