// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "oncpu: " fmt

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/counters.h"
#include "lib/log.h"
#include "lib/timeconst.h"
#include "store/store.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"
#include "bpf/oncpu_abi.h"
#include "bpf/oncpu.skel.h"
#include "sample/ingest.h"
#include "sample/oncpu.h"
#include "probes/probes.h"
#include "sample/proccpu.h"

_Static_assert(ONCPU_MAX_KSTACK <= INGEST_MAX_KSTACK && ONCPU_MAX_USTACK <= INGEST_MAX_USTACK &&
		       ONCPU_MAX_PYTHON <= INGEST_MAX_PYTHON,
	       "an on-CPU stack fits the ingest path");

struct oncpu {
	struct collect_ctx *ctx;
	struct oncpu_bpf *skel;
	struct bpf_link **links;
	int *pfds;
	int nr_cpus;
	uint64_t period_ns;
	uint64_t mono_to_real_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	uint64_t ringbuf_size;
	struct ring *ring;
	unsigned long long ingested, drop_store, drop_malformed;
	struct ingest *ingest;
};

static int handle_sample(void *arg, void *data, size_t size)
{
	struct oncpu *oc = arg;
	const struct oncpu_event *e = data;
	struct collect_ctx *ctx = oc->ctx;
	struct ingest_stack st;
	struct ingest_raw raw;
	struct sample smp;
	char comm[ONCPU_COMM_LEN + 1];
	uint32_t nk, nu, np;

	if (size < offsetof(struct oncpu_event, stack))
		goto malformed;
	nk = e->nr_kstack;
	nu = e->nr_ustack;
	np = e->nr_python;
	if (nk > ONCPU_MAX_KSTACK || nu > ONCPU_MAX_USTACK || np > ONCPU_MAX_PYTHON ||
	    size < offsetof(struct oncpu_event, stack) + (nk + nu + 2 * np) * sizeof(__u64))
		goto malformed;

	raw = (struct ingest_raw){
		.pid = e->pid,
		.time_ns = e->time_ns,
		.kthread = !!(e->flags & ONCPU_F_KTHREAD),
		.kstack = e->stack,
		.nr_kstack = nk,
		.kleaf_exact = true,
		.ustack = &e->stack[nk],
		.nr_ustack = nu,
		/* The user leaf is a return address too after a system call, not after an
		 * exception. */
		.uleaf_exact = nk == 0 || (e->flags & ONCPU_F_USER_PC_EXACT),
		.utruncated = !!(e->flags & ONCPU_F_USTACK_TRUNCATED),
		.uend = e->flags & ONCPU_F_USER_EXEC	 ? SYM_MARKER_EXEC :
			e->flags & ONCPU_F_USER_EXITED ? SYM_MARKER_EXITED :
							 SYM_MARKER_NONE,
		.python = np ? &e->stack[nk + nu] : NULL,
		.nr_python = np,
	};
	if (ingest__resolve(oc->ingest, &raw, now_ns(), &st))
		goto malformed;

	memcpy(comm, e->comm, ONCPU_COMM_LEN);
	comm[ONCPU_COMM_LEN] = '\0';
	smp = (struct sample){
		.type = PROFILE_CPU,
		.pid = e->pid,
		.tid = e->tid,
		.time_ns = e->time_ns,
		.comm = comm,
		.trace_id = e->flags & ONCPU_F_TRACE_CTX ? e->trace_id : NULL,
		.span_id = e->flags & ONCPU_F_TRACE_CTX ? e->span_id : NULL,
		.frames = st.frames,
		.nr_frames = st.nr_frames,
		.values = { 1, oc->period_ns },
	};
	ingest__describe(&smp, st.proc);
	if (store__add(ctx->store, &smp)) {
		oc->drop_store++;
	} else {
		oc->ingested++;
		/* Again, labelled, once the probed calls it was taken in have ended. */
		if (e->nr_calls && ctx->probes)
			probes__sample(ctx->probes, &smp,
				       e->nr_calls < ONCPU_MAX_CALLS ? e->nr_calls : ONCPU_MAX_CALLS,
				       e->call_probe, (const uint64_t *)e->call_start);
		proccpu__add(ctx->cpu, e->pid, smp.exe, oc->period_ns, smp.trace_id, smp.span_id,
			     e->time_ns + oc->mono_to_real_ns);
	}
	return 0;
malformed:
	oc->drop_malformed++;
	return 0;
}

static int attach(struct oncpu *oc)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* cpu-clock counts nanoseconds: a fixed period gives exactly Hz samples per CPU
		 * second, each worth period_ns of CPU time. */
		.sample_period = oc->period_ns,
	};
	int n = libbpf_num_possible_cpus(), err = 0;

	if (n <= 0)
		return n ? n : -EINVAL;
	oc->links = calloc(n, sizeof(*oc->links));
	oc->pfds = malloc(n * sizeof(*oc->pfds));
	if (!oc->links || !oc->pfds)
		return -ENOMEM;
	oc->nr_cpus = n;
	for (int cpu = 0; cpu < n; cpu++)
		oc->pfds[cpu] = -1;
	for (int cpu = 0; cpu < n; cpu++) {
		oc->pfds[cpu] = syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
					PERF_FLAG_FD_CLOEXEC);
		if (oc->pfds[cpu] < 0) {
			err = -errno;
			if (err == -ENODEV) {
				/* A possible CPU that is offline. */
				err = 0;
				continue;
			}
			pr_err("perf_event_open(cpu-clock) on CPU %d: %s\n", cpu, strerror(-err));
			return err;
		}
		oc->links[cpu] = bpf_program__attach_perf_event(oc->skel->progs.oncpu_sample,
								 oc->pfds[cpu]);
		if (!oc->links[cpu]) {
			err = -errno;
			pr_err("cannot attach to CPU %d: %s\n", cpu, strerror(-err));
			return err;
		}
		/* The link owns the perf event fd now and closes it when destroyed. */
		oc->pfds[cpu] = -1;
	}
	return 0;
}

struct oncpu *oncpu__new(const struct oncpu_opts *opts, struct collect_ctx *ctx, int *err)
{
	struct oncpu *oc = calloc(1, sizeof(*oc));

	if (!oc) {
		*err = -ENOMEM;
		return NULL;
	}
	oc->ctx = ctx;
	oc->ingest = ingest__new(ctx);
	if (!oc->ingest) {
		*err = -ENOMEM;
		goto out_free;
	}
	oc->period_ns = NSEC_PER_SEC / opts->frequency;
	{
		struct timespec r, m;

		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m);
		oc->mono_to_real_ns = (r.tv_sec - m.tv_sec) * NSEC_PER_SEC + r.tv_nsec - m.tv_nsec;
	}
	oc->ringbuf_size = opts->ringbuf_size;
	oc->skel = oncpu_bpf__open();
	if (!oc->skel) {
		*err = -errno;
		pr_err("cannot open BPF object: %s\n", strerror(-*err));
		goto out_free;
	}
	oc->skel->rodata->wakeup_bytes = opts->ringbuf_size / 4;
	oc->skel->rodata->unwind_tables = ctx->unwinder != NULL;
	*err = collect__share_maps(ctx, oc->skel->obj);
	if (*err) {
		pr_err("cannot share the process map: %s\n", strerror(-*err));
		goto out_destroy;
	}
	/* A perf_event program never runs preemptibly: the walk cache is its to use. */
	if (ctx->unwinder) {
		*err = unwinder__cache_walks(ctx->unwinder, oc->skel->obj);
		if (*err < 0)
			goto out_destroy;
		oc->skel->rodata->unwind_cache = *err;
		*err = 0;
	}
	*err = bpf_map__set_max_entries(oc->skel->maps.events, opts->ringbuf_size);
	if (*err)
		goto out_destroy;
	*err = oncpu_bpf__load(oc->skel);
	if (*err) {
		pr_err("cannot load BPF program: %s\n", strerror(-*err));
		goto out_destroy;
	}
	*err = attach(oc);
	if (*err)
		goto out_destroy;
	*err = collect__add_ring(ctx, bpf_map__fd(oc->skel->maps.events), handle_sample, oc,
				 &oc->ring);
	if (*err)
		goto out_destroy;
	store__set_period(ctx->store, PROFILE_CPU, oc->period_ns);
	return oc;

out_destroy:
	oncpu__free(oc);
	return NULL;
out_free:
	ingest__free(oc->ingest);
	free(oc);
	return NULL;
}

void oncpu__free(struct oncpu *oc)
{
	if (!oc)
		return;
	for (int cpu = 0; cpu < oc->nr_cpus; cpu++) {
		bpf_link__destroy(oc->links[cpu]);
		if (oc->pfds[cpu] >= 0)
			close(oc->pfds[cpu]);
	}
	free(oc->links);
	free(oc->pfds);
	oncpu_bpf__destroy(oc->skel);
	ingest__free(oc->ingest);
	free(oc);
}

void oncpu__stats(struct oncpu *oc, struct oncpu_stats *out)
{
	unsigned long long c[ONCPU_CNT__MAX] = { 0 };
	unsigned int cpus = 0;

	counters__read(bpf_map__fd(oc->skel->maps.counters), c, ONCPU_CNT__MAX);
	for (int cpu = 0; cpu < oc->nr_cpus; cpu++)
		cpus += oc->links[cpu] != NULL;
	*out = (struct oncpu_stats){
		.samples = c[ONCPU_CNT_SAMPLES],
		.idle = c[ONCPU_CNT_IDLE],
		.drop_ringbuf = c[ONCPU_CNT_DROP_RINGBUF],
		.kstack_errors = c[ONCPU_CNT_KSTACK_ERROR],
		.ustack_errors = c[ONCPU_CNT_USTACK_ERROR],
		.ustack_truncated = c[ONCPU_CNT_USTACK_TRUNCATED],
		.ingested = oc->ingested,
		.drop_store = oc->drop_store,
		.drop_malformed = oc->drop_malformed,
		.ringbuf_used = oc->ring ? ring__avail_data_size(oc->ring) : 0,
		.ringbuf_size = oc->ringbuf_size,
		.cpus = cpus,
	};
}
