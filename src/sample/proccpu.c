// SPDX-License-Identifier: GPL-2.0-only
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/hex.h"
#include "lib/metrics.h"
#include "sample/proccpu.h"
#include "proc/proctab.h"

#define BUCKETS 1024

struct account {
	struct account *next;
	uint32_t pid;
	char exe[64];
	uint64_t cpu_ns;
	bool has_exemplar;
	uint8_t trace[24];
	uint64_t exemplar_ns;	 /* CPU time of the sample */
	uint64_t exemplar_time; /* realtime ns */
};

struct proccpu {
	pthread_mutex_t lock;
	struct account *buckets[BUCKETS];
};

struct proccpu *proccpu__new(void)
{
	struct proccpu *pc = calloc(1, sizeof(*pc));

	if (pc)
		pthread_mutex_init(&pc->lock, NULL);
	return pc;
}

void proccpu__free(struct proccpu *pc)
{
	if (!pc)
		return;
	for (int i = 0; i < BUCKETS; i++) {
		while (pc->buckets[i]) {
			struct account *a = pc->buckets[i];

			pc->buckets[i] = a->next;
			free(a);
		}
	}
	pthread_mutex_destroy(&pc->lock);
	free(pc);
}

static struct account **find(struct proccpu *pc, uint32_t pid)
{
	struct account **pp = &pc->buckets[hash__u64(pid) % BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

void proccpu__add(struct proccpu *pc, uint32_t pid, const char *exe, uint64_t cpu_ns,
		  const uint8_t *trace_id, const uint8_t *span_id, uint64_t realtime_ns)
{
	struct account **slot, *a;

	pthread_mutex_lock(&pc->lock);
	slot = find(pc, pid);
	a = *slot;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			goto out_unlock;
		a->pid = pid;
		*slot = a;
	}
	if (exe && exe[0])
		snprintf(a->exe, sizeof(a->exe), "%s", exe);
	a->cpu_ns += cpu_ns;
	if (trace_id) {
		memcpy(a->trace, trace_id, 16);
		memcpy(a->trace + 16, span_id, 8);
		a->exemplar_ns = cpu_ns;
		a->exemplar_time = realtime_ns;
		a->has_exemplar = true;
	}
out_unlock:
	pthread_mutex_unlock(&pc->lock);
}

void proccpu__exit(struct proccpu *pc, uint32_t pid)
{
	struct account **slot, *a;

	pthread_mutex_lock(&pc->lock);
	slot = find(pc, pid);
	a = *slot;
	if (a) {
		*slot = a->next;
		free(a);
	}
	pthread_mutex_unlock(&pc->lock);
}


void proccpu__metrics(struct metrics_writer *w, void *ctx)
{
	struct proccpu *pc = ctx;

	metrics__family(w, "autoprof_process_cpu_seconds", METRIC_COUNTER,
			"CPU time of each live process as sampled; in OpenMetrics the exemplar is "
			"its latest sample taken inside a span (trace_id, span_id)");
	pthread_mutex_lock(&pc->lock);
	for (int i = 0; i < BUCKETS; i++) {
		for (struct account *a = pc->buckets[i]; a; a = a->next) {
			char pid[16], trace_id[33], span_id[17];
			const char *labels[] = { "trace_id", trace_id, "span_id", span_id };
			struct metrics_exemplar ex = {
				.labels = labels,
				.nr_labels = a->has_exemplar ? 2 : 0,
				.value = a->exemplar_ns / 1e9,
				.timestamp = a->exemplar_time / 1e9,
			};

			snprintf(pid, sizeof(pid), "%u", a->pid);
			hex__encode(a->trace, 16, trace_id);
			hex__encode(a->trace + 16, 8, span_id);
			metrics__sample_exemplar(w, &ex, a->cpu_ns / 1e9, "pid", pid, "exe", a->exe,
						 NULL);
		}
	}
	pthread_mutex_unlock(&pc->lock);
}

static void exit_cb(void *ctx, uint32_t pid)
{
	proccpu__exit(ctx, pid);
}

int proccpu__observe(struct proccpu *pc, struct proctab *pt)
{
	return proctab__observe(pt, &(struct proc_observer){
					    .name = "proccpu",
					    .exit = exit_cb,
					    .ctx = pc,
				    });
}
