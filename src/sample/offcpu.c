// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "offcpu: " fmt

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/counters.h"
#include "lib/log.h"
#include "lib/timeconst.h"
#include "store/store.h"
#include "bpf/offcpu_abi.h"
#include "bpf/offcpu.skel.h"
#include "sample/ingest.h"
#include "sample/offcpu.h"
#include "sample/interval.h"
#include "unwind/unwind.h"

#define WAIT_BUCKETS 4096 /* a power of two */
/* Spans held for their user stack; beyond it new spans are dropped (counted as unjoined). */
#define MAX_WAITING 65536
/*
 * A span whose user stack has not come by then never will: its thread exited before returning
 * to user space, or the task work or its event was lost. The user part follows the span within
 * one drain unless the thread stays in the kernel (several waits in one system call).
 */
#define WAIT_TIMEOUT_NS (10 * NSEC_PER_SEC)

/* A span waiting for the user stack of its thread (bpf/offcpu_abi.h: why two events). */
struct wait {
	struct wait *next;
	uint64_t start_ns, end_ns;
	uint32_t pid, tid;
	uint32_t nr_kstack;
	char comm[OFFCPU_COMM_LEN + 1];
	__u64 kstack[];
};

_Static_assert(OFFCPU_MAX_KSTACK <= INGEST_MAX_KSTACK && OFFCPU_MAX_USTACK <= INGEST_MAX_USTACK &&
		       OFFCPU_MAX_PYTHON <= INGEST_MAX_PYTHON,
	       "an off-CPU stack fits the ingest path");

struct offcpu {
	struct collect_ctx *ctx;
	struct offcpu_bpf *skel;
	/* Settings and the link change from HTTP threads. */
	pthread_mutex_t lock;
	struct bpf_link *link; /* NULL while disabled: a detached program costs nothing */
	struct offcpu_settings settings;
	uint64_t ringbuf_size;
	struct ring *ring;
	/* Ingest thread only from here on. */
	struct wait *waits[WAIT_BUCKETS]; /* by tid */
	unsigned long long nr_waiting, next_sweep_ns;
	unsigned long long ingested, drop_store, drop_malformed, drop_unjoined, filter_no_user;
	struct ingest *ingest;
};

struct part_ctx {
	struct offcpu *oc;
	struct sample *smp;
	int stored;
};

static int store_part(void *arg, uint64_t start_ns, uint64_t ns, bool last)
{
	struct part_ctx *pc = arg;
	int err;

	pc->smp->time_ns = start_ns;
	/* The span counts once, in the second it ended in; its time goes where it was spent. */
	pc->smp->values[0] = last;
	pc->smp->values[1] = ns;
	err = store__add(pc->oc->ctx->store, pc->smp);
	if (err == -ENOMEM) {
		pc->oc->drop_store++;
		return err;
	}
	/* -ERANGE (older than the retention) is counted by the store. */
	pc->stored += !err && last;
	return 0;
}

/* A span and the user stack of its thread, joined: into the store, cut at whole seconds. */
static void record(struct offcpu *oc, const struct wait *w, const struct offcpu_user *u)
{
	struct collect_ctx *ctx = oc->ctx;
	uint64_t retention_s = store__retention_ns(ctx->store) / NSEC_PER_SEC;
	int64_t oldest = store__now_sec() - (int64_t)retention_s;
	struct ingest_stack st;
	struct part_ctx pc;
	struct sample smp;
	/* A sleeping task's kernel stack holds return addresses only: step back into the call.
	 * The user leaf is the instruction after the system call (or the faulting one).
	 * handle_event() checked that a record with nr_python is a struct offcpu_user_python. */
	const struct ingest_raw raw = {
		.pid = w->pid,
		.kstack = w->kstack,
		.nr_kstack = w->nr_kstack,
		.ustack = u->ustack,
		.nr_ustack = u->nr_ustack,
		.uleaf_exact = w->nr_kstack == 0,
		.utruncated = !!(u->flags & OFFCPU_F_USTACK_TRUNCATED),
		.python = u->nr_python ? ((const struct offcpu_user_python *)u)->python : NULL,
		.nr_python = u->nr_python,
	};

	if (ingest__resolve(oc->ingest, &raw, now_ns(), &st)) {
		oc->drop_malformed++;
		return;
	}
	if (!st.proc) {
		oc->drop_store++;
		return;
	}
	smp = (struct sample){
		.type = PROFILE_OFFCPU,
		.pid = w->pid,
		.tid = w->tid,
		.comm = w->comm,
		.trace_id = u->flags & OFFCPU_F_TRACE_CTX ? u->trace_id : NULL,
		.span_id = u->flags & OFFCPU_F_TRACE_CTX ? u->span_id : NULL,
		.frames = st.frames,
		.nr_frames = st.nr_frames,
	};
	ingest__describe(&smp, st.proc);
	pc = (struct part_ctx){ oc, &smp, 0 };
	interval__split(w->start_ns, w->end_ns, oldest > 0 ? (uint64_t)oldest * NSEC_PER_SEC : 0,
			store_part, &pc);
	oc->ingested += pc.stored;
}

/* Completes every span of u's thread held so far with u's user stack. */
static void join(struct offcpu *oc, const struct offcpu_user *u)
{
	struct wait **pp = &oc->waits[u->tid & (WAIT_BUCKETS - 1)], *w;

	while ((w = *pp)) {
		if (w->tid != u->tid) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		oc->nr_waiting--;
		/* The rule: a span is shown only with at least one user frame. A different pid is
		 * a reused tid whose span lost its user part. */
		if (w->pid == u->pid && u->nr_ustack)
			record(oc, w, u);
		else
			oc->filter_no_user++;
		free(w);
	}
}

static void hold(struct offcpu *oc, const struct offcpu_span *e)
{
	struct wait *w, **head = &oc->waits[e->tid & (WAIT_BUCKETS - 1)];

	if (oc->nr_waiting >= MAX_WAITING) {
		oc->drop_unjoined++;
		return;
	}
	w = malloc(sizeof(*w) + e->nr_kstack * sizeof(w->kstack[0]));
	if (!w) {
		oc->drop_store++;
		return;
	}
	w->start_ns = e->start_ns;
	w->end_ns = e->end_ns;
	w->pid = e->pid;
	w->tid = e->tid;
	w->nr_kstack = e->nr_kstack;
	memcpy(w->comm, e->comm, OFFCPU_COMM_LEN);
	w->comm[OFFCPU_COMM_LEN] = '\0';
	memcpy(w->kstack, e->kstack, e->nr_kstack * sizeof(w->kstack[0]));
	w->next = *head;
	*head = w;
	oc->nr_waiting++;
}

/* Gives up spans whose user stack never came, once a second at most. */
static void sweep(struct offcpu *oc, unsigned long long now)
{
	if (now < oc->next_sweep_ns || !oc->nr_waiting)
		return;
	oc->next_sweep_ns = now + NSEC_PER_SEC;
	for (unsigned int b = 0; b < WAIT_BUCKETS; b++) {
		struct wait **pp = &oc->waits[b], *w;

		while ((w = *pp)) {
			if (w->end_ns + WAIT_TIMEOUT_NS > now) {
				pp = &w->next;
				continue;
			}
			*pp = w->next;
			oc->nr_waiting--;
			oc->drop_unjoined++;
			free(w);
		}
	}
}

static int handle_event(void *arg, void *data, size_t size)
{
	struct offcpu *oc = arg;
	const struct offcpu_span *e = data;
	const struct offcpu_user *u = data;

	if (size < sizeof(e->kind))
		goto malformed;
	switch (e->kind) {
	case OFFCPU_EV_SPAN:
		if (size < offsetof(struct offcpu_span, kstack) || e->nr_kstack > OFFCPU_MAX_KSTACK ||
		    size < offsetof(struct offcpu_span, kstack) + e->nr_kstack * sizeof(__u64))
			goto malformed;
		hold(oc, e);
		break;
	case OFFCPU_EV_USER:
		if (size < offsetof(struct offcpu_user, ustack) || u->nr_ustack > OFFCPU_MAX_USTACK ||
		    size < offsetof(struct offcpu_user, ustack) + u->nr_ustack * sizeof(__u64))
			goto malformed;
		/* With Python frames, the pairs follow in a struct offcpu_user_python. */
		if (u->nr_python &&
		    (u->nr_python > OFFCPU_MAX_PYTHON ||
		     size < offsetof(struct offcpu_user_python, python) +
				    2 * u->nr_python * sizeof(__u64)))
			goto malformed;
		join(oc, u);
		sweep(oc, u->time_ns);
		break;
	default:
		goto malformed;
	}
	return 0;
malformed:
	oc->drop_malformed++;
	return 0;
}

static void map__clear(int fd)
{
	__u32 tid;

	while (!bpf_map_get_next_key(fd, NULL, &tid))
		if (bpf_map_delete_elem(fd, &tid))
			break;
}

/* With the program detached: forget threads blocked when it was, they are not switched in
 * (their start times carry the old epoch). */
static void forget_starts(struct offcpu *oc)
{
	oc->skel->data->epoch++;
}

int offcpu__configure(struct offcpu *oc, const struct offcpu_settings *s)
{
	int err = 0;

	pthread_mutex_lock(&oc->lock);
	/* Plain stores into the mmap'ed .data: the program reads each once per switch. */
	oc->skel->data->min_block_ns = s->min_block_ns;
	oc->skel->data->sample_threshold = ((uint64_t)s->sample_ppm << 32) / 1000000;
	if (s->enabled && !oc->link) {
		oc->link = bpf_program__attach(oc->skel->progs.offcpu_switch);
		if (!oc->link) {
			err = -errno;
			pr_err("cannot attach to sched_switch: %s\n", strerror(-err));
		}
	} else if (!s->enabled && oc->link) {
		bpf_link__destroy(oc->link);
		oc->link = NULL;
		forget_starts(oc);
	}
	if (!err) {
		oc->settings = *s;
	} else {
		oc->skel->data->min_block_ns = oc->settings.min_block_ns;
		oc->skel->data->sample_threshold =
			((uint64_t)oc->settings.sample_ppm << 32) / 1000000;
	}
	pthread_mutex_unlock(&oc->lock);
	if (!err)
		pr_info("%s, min block %llu ns, sample probability %u ppm\n",
			s->enabled ? "enabled" : "disabled", (unsigned long long)s->min_block_ns,
			s->sample_ppm);
	return err;
}

void offcpu__settings(struct offcpu *oc, struct offcpu_settings *out)
{
	pthread_mutex_lock(&oc->lock);
	*out = oc->settings;
	pthread_mutex_unlock(&oc->lock);
}

/* Array slots for every tid up to this many; beyond, task storage (the array would be big). */
#define MAX_SLOTS (1U << 18)

static unsigned long read_ulong_file(const char *path)
{
	unsigned long v = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/*
 * Where switch-out times live and which clock times them (bpf/offcpu.bpf.c). The run queue's
 * clock is sched_clock(), one clock across CPUs only when the TSC is the stable clocksource;
 * elsewhere the monotonic clock, at about 60 ns a read. A pid_max raised after this would fold
 * new tids onto old slots: their spans are dropped by the tid check, never misattributed.
 */
static int choose_clock_and_slots(struct offcpu_bpf *skel)
{
	unsigned long pid_max = read_ulong_file("/proc/sys/kernel/pid_max");
	char src[32] = "";
	__u32 slots = 1;
	FILE *f;

	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = '\0';
		fclose(f);
	}
	skel->rodata->rq_clock = strncmp(src, "tsc", 3) == 0 && (src[3] == '\n' || !src[3]);
	while (slots < pid_max && slots < MAX_SLOTS)
		slots <<= 1;
	skel->rodata->slots_by_tid = pid_max && slots >= pid_max;
	if (!skel->rodata->slots_by_tid)
		slots = 1;
	skel->rodata->slot_mask = slots - 1;
	pr_debug("switch-out times in %s (pid_max %lu), timed by the %s clock\n",
		 skel->rodata->slots_by_tid ? "tid slots" : "task storage", pid_max,
		 skel->rodata->rq_clock ? "run queue" : "monotonic");
	return bpf_map__set_max_entries(skel->maps.slots, slots);
}

struct offcpu *offcpu__new(const struct offcpu_opts *opts, struct collect_ctx *ctx, int *err)
{
	struct offcpu *oc = calloc(1, sizeof(*oc));

	if (!oc) {
		*err = -ENOMEM;
		return NULL;
	}
	oc->ctx = ctx;
	pthread_mutex_init(&oc->lock, NULL);
	oc->ingest = ingest__new(ctx);
	if (!oc->ingest) {
		*err = -ENOMEM;
		goto out_free;
	}
	oc->ringbuf_size = opts->ringbuf_size;
	oc->skel = offcpu_bpf__open();
	if (!oc->skel) {
		*err = -errno;
		pr_err("cannot open BPF object: %s\n", strerror(-*err));
		goto out_free;
	}
	oc->skel->rodata->wakeup_bytes = opts->ringbuf_size / 4;
	oc->skel->rodata->unwind_tables = ctx->unwinder != NULL;
	*err = choose_clock_and_slots(oc->skel);
	if (*err)
		goto out_destroy;
	*err = collect__share_maps(ctx, oc->skel->obj);
	if (*err) {
		pr_err("cannot share the process map: %s\n", strerror(-*err));
		goto out_destroy;
	}
	/* No walk cache: the user stack is walked in a task work, which can be preempted by
	 * another's on the same CPU (bpf/unwind.bpf.h). */
	*err = bpf_map__set_max_entries(oc->skel->maps.events, opts->ringbuf_size);
	if (*err)
		goto out_destroy;
	*err = offcpu_bpf__load(oc->skel);
	if (*err) {
		/* Before Linux 6.18 there is no BPF task work to read the user stack with. */
		pr_err("cannot load BPF program (needs Linux 6.18 for BPF task work): %s\n",
		       strerror(-*err));
		goto out_destroy;
	}
	*err = collect__add_ring(ctx, bpf_map__fd(oc->skel->maps.events), handle_event, oc,
				 &oc->ring);
	if (*err)
		goto out_destroy;
	*err = offcpu__configure(oc, &opts->settings);
	if (*err)
		goto out_destroy;
	store__set_period(ctx->store, PROFILE_OFFCPU, 1);
	return oc;

out_destroy:
	offcpu__free(oc);
	return NULL;
out_free:
	ingest__free(oc->ingest);
	free(oc);
	return NULL;
}

void offcpu__free(struct offcpu *oc)
{
	if (!oc)
		return;
	bpf_link__destroy(oc->link);
	/*
	 * A task work not yet run holds the program: a thread woken but gone back to sleep in the
	 * kernel (a spurious wakeup in a wait loop) would keep it loaded until it returns to user
	 * space. Deleting the map element cancels the work and drops that reference.
	 */
	if (oc->skel)
		map__clear(bpf_map__fd(oc->skel->maps.pending));
	offcpu_bpf__destroy(oc->skel);
	for (unsigned int b = 0; b < WAIT_BUCKETS; b++) {
		while (oc->waits[b]) {
			struct wait *w = oc->waits[b];

			oc->waits[b] = w->next;
			free(w);
		}
	}
	pthread_mutex_destroy(&oc->lock);
	ingest__free(oc->ingest);
	free(oc);
}

void offcpu__stats(struct offcpu *oc, struct offcpu_stats *out)
{
	unsigned long long c[OFFCPU_CNT__MAX] = { 0 };

	counters__read(bpf_map__fd(oc->skel->maps.counters), c, OFFCPU_CNT__MAX);
	*out = (struct offcpu_stats){
		.spans = c[OFFCPU_CNT_SPANS],
		.user_stacks = c[OFFCPU_CNT_USER],
		.filter_short = c[OFFCPU_CNT_FILTER_SHORT],
		.filter_long = c[OFFCPU_CNT_FILTER_LONG],
		.filter_sampled = c[OFFCPU_CNT_FILTER_SAMPLED],
		.filter_no_user = oc->filter_no_user,
		.drop_map_full = c[OFFCPU_CNT_DROP_MAP_FULL],
		.drop_ringbuf = c[OFFCPU_CNT_DROP_RINGBUF],
		.drop_task_work = c[OFFCPU_CNT_DROP_TASK_WORK],
		.drop_unjoined = oc->drop_unjoined,
		.drop_store = oc->drop_store,
		.drop_malformed = oc->drop_malformed,
		.kstack_errors = c[OFFCPU_CNT_KSTACK_ERROR],
		.ustack_errors = c[OFFCPU_CNT_USTACK_ERROR],
		.ustack_truncated = c[OFFCPU_CNT_USTACK_TRUNCATED],
		.python_raced = c[OFFCPU_CNT_PYTHON_RACED],
		.ingested = oc->ingested,
		.waiting = oc->nr_waiting,
		.ringbuf_used = oc->ring ? ring__avail_data_size(oc->ring) : 0,
		.ringbuf_size = oc->ringbuf_size,
	};
	offcpu__settings(oc, &out->settings);
}
