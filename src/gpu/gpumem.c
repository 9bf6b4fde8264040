// SPDX-License-Identifier: GPL-2.0-only
/*
 * GPU memory profiling (gpumem.h): the BPF object, the CUDA libraries it probes, the events it
 * sends and the live set they make.
 */
#define pr_fmt(fmt) "gpu: " fmt

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/gpumem_abi.h"
#include "bpf/gpumem.skel.h"
#include "gpu/cudafns.h"
#include "gpu/gpumem.h"
#include "lib/counters.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/timeconst.h"
#include "proc/proctab.h"
#include "sample/ingest.h"
#include "store/store.h"
#include "symbolize/dso.h"

/* Library files probed at most: a host has a few CUDA installs, not hundreds. */
#define MAX_LIBS 64
#define LIVE_BUCKETS_MIN 256

_Static_assert(GPUMEM_MAX_USTACK <= INGEST_MAX_USTACK && GPUMEM_MAX_PYTHON <= INGEST_MAX_PYTHON,
	       "an allocation's stack fits the ingest path");

/* A library file probed for every process that maps it (pid -1 links). */
struct gpulib {
	uint64_t dev, ino; /* as the maps say (struct proc_map) */
	enum cuda_lib lib;
	struct bpf_link *entry, *ret;
};

/* A live allocation. */
struct glive {
	struct glive *next;
	uint32_t pid, tid;
	uint64_t ptr;
	uint64_t bytes;
	uint8_t space, api;
	uint16_t gpu;
	char comm[GPUMEM_COMM_LEN + 1];
	char exe[64];
	uint32_t nr_frames;
	struct frame *frames; /* dso references held */
};

struct gpumem {
	struct collect_ctx *ctx;
	struct gpumem_bpf *skel;
	struct ring *ring;
	struct ingest *ingest;
	uint32_t max_live;
	struct gpulib libs[MAX_LIBS]; /* ingest thread only */
	uint32_t nr_libs;
	pthread_mutex_t lock; /* the live table and the counters below */
	struct glive **buckets;
	uint32_t nr_buckets, nr_live;
	uint64_t live_bytes;
	unsigned long long attach_failed, drop_live_full, frees_unknown;
	unsigned long long ingested, drop_store, drop_malformed;
};

/* ---- the live table (under g->lock) --------------------------------------------------------- */

static uint32_t glive_hash(uint32_t pid, uint8_t space, uint64_t ptr)
{
	uint64_t h = (ptr >> 4 ^ space) * 0x9e3779b97f4a7c15ULL ^ pid * 0xff51afd7ed558ccdULL;

	return (uint32_t)(h >> 32);
}

static void glive__free(struct glive *l)
{
	for (uint32_t i = 0; i < l->nr_frames; i++)
		dso__put(l->frames[i].dso);
	free(l->frames);
	free(l);
}

static int glive__grow(struct gpumem *g)
{
	uint32_t n = g->nr_buckets ? g->nr_buckets * 2 : LIVE_BUCKETS_MIN;
	struct glive **b;

	if (g->nr_live < g->nr_buckets)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nr_buckets; i++) {
		while (g->buckets[i]) {
			struct glive *l = g->buckets[i];
			uint32_t at = glive_hash(l->pid, l->space, l->ptr) & (n - 1);

			g->buckets[i] = l->next;
			l->next = b[at];
			b[at] = l;
		}
	}
	free(g->buckets);
	g->buckets = b;
	g->nr_buckets = n;
	return 0;
}

/* The slot pointing at (pid, space, ptr)'s entry, or at the NULL ending its chain; NULL when
 * the table is empty. */
static struct glive **glive__find(struct gpumem *g, uint32_t pid, uint8_t space, uint64_t ptr)
{
	struct glive **pp;

	if (!g->nr_buckets)
		return NULL;
	pp = &g->buckets[glive_hash(pid, space, ptr) & (g->nr_buckets - 1)];
	while (*pp && ((*pp)->pid != pid || (*pp)->space != space || (*pp)->ptr != ptr))
		pp = &(*pp)->next;
	return pp;
}

static void glive__remove(struct gpumem *g, struct glive **pp)
{
	struct glive *l = *pp;

	*pp = l->next;
	g->nr_live--;
	g->live_bytes -= l->bytes;
	glive__free(l);
}

static void drop_pid(struct gpumem *g, uint32_t pid)
{
	int fd = bpf_map__fd(g->skel->maps.gpumem_ctxdev);
	struct {
		uint32_t pid, pad;
		uint64_t ctx;
	} key, next, *prev = NULL;

	pthread_mutex_lock(&g->lock);
	for (uint32_t i = 0; i < g->nr_buckets; i++) {
		struct glive **pp = &g->buckets[i];

		while (*pp) {
			if ((*pp)->pid == pid)
				glive__remove(g, pp);
			else
				pp = &(*pp)->next;
		}
	}
	pthread_mutex_unlock(&g->lock);
	/* Its contexts' devices: a later process given the pid has other contexts. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (prev && prev->pid == pid)
			bpf_map_delete_elem(fd, prev);
		key = next;
		prev = &key;
	}
	if (prev && prev->pid == pid)
		bpf_map_delete_elem(fd, prev);
}

/* ---- events --------------------------------------------------------------------------------- */

static void hold(struct gpumem *g, const struct gpumem_alloc_event *e, const struct cudafn *fn,
		 const struct sample *smp)
{
	struct glive *l, **pp;

	pthread_mutex_lock(&g->lock);
	if (g->nr_live >= g->max_live) {
		g->drop_live_full++;
		goto out;
	}
	if (glive__grow(g))
		goto out;
	pp = glive__find(g, e->pid, fn->space, e->ptr);
	/* Its free was lost: this allocation replaces it. */
	if (*pp)
		glive__remove(g, pp);
	l = calloc(1, sizeof(*l));
	if (!l)
		goto out;
	l->frames = malloc((smp->nr_frames ? smp->nr_frames : 1) * sizeof(*l->frames));
	if (!l->frames) {
		free(l);
		goto out;
	}
	l->pid = e->pid;
	l->tid = e->tid;
	l->ptr = e->ptr;
	l->bytes = e->size;
	l->space = fn->space;
	l->api = fn->api;
	l->gpu = smp->gpu;
	snprintf(l->comm, sizeof(l->comm), "%s", smp->comm);
	snprintf(l->exe, sizeof(l->exe), "%s", smp->exe ? smp->exe : "");
	l->nr_frames = smp->nr_frames;
	for (uint32_t i = 0; i < smp->nr_frames; i++)
		l->frames[i] = (struct frame){ dso__get(smp->frames[i].dso), smp->frames[i].addr };
	l->next = *pp;
	*pp = l;
	g->nr_live++;
	g->live_bytes += l->bytes;
out:
	pthread_mutex_unlock(&g->lock);
}

static void ingest_alloc(struct gpumem *g, const struct gpumem_alloc_event *e, size_t size)
{
	const struct cudafn *fn = cudafn__row(e->row);
	uint32_t nu = e->nr_ustack, np = e->nr_python;
	char comm[GPUMEM_COMM_LEN + 1];
	struct ingest_stack st;
	struct ingest_raw raw;
	struct sample smp;

	if (!fn || nu > GPUMEM_MAX_USTACK || np > GPUMEM_MAX_PYTHON ||
	    size < offsetof(struct gpumem_alloc_event, stack) + (nu + 2 * np) * sizeof(__u64)) {
		g->drop_malformed++;
		return;
	}
	/* Every entry is a return address, the first too (the allocating call's). */
	raw = (struct ingest_raw){
		.pid = e->pid,
		.ustack = e->stack,
		.nr_ustack = nu,
		.utruncated = !!(e->flags & GPUMEM_F_USTACK_TRUNCATED),
		.python = np ? &e->stack[nu] : NULL,
		.nr_python = np,
	};
	if (ingest__resolve(g->ingest, &raw, now_ns(), &st)) {
		g->drop_malformed++;
		return;
	}
	memcpy(comm, e->comm, GPUMEM_COMM_LEN);
	comm[GPUMEM_COMM_LEN] = '\0';
	smp = (struct sample){
		.type = PROFILE_GPUALLOCS,
		.pid = e->pid,
		.tid = e->tid,
		.time_ns = e->time_ns,
		.comm = comm,
		.frames = st.frames,
		.nr_frames = st.nr_frames,
		.values = { 1, e->size, 0, 0 },
		.gpu_api = fn->api,
		.gpu = e->device <= UINT16_MAX ? (uint16_t)e->device : 0,
	};
	ingest__describe(&smp, st.proc);
	if (store__add(g->ctx->store, &smp))
		g->drop_store++;
	else
		g->ingested++;
	hold(g, e, fn, &smp);
}

static void ingest_free(struct gpumem *g, const struct gpumem_free_event *f)
{
	const struct cudafn *fn = cudafn__row(f->row);
	struct glive **pp;

	if (!fn) {
		g->drop_malformed++;
		return;
	}
	pthread_mutex_lock(&g->lock);
	pp = glive__find(g, f->pid, fn->space, f->ptr);
	if (pp && *pp)
		glive__remove(g, pp);
	else
		g->frees_unknown++;
	pthread_mutex_unlock(&g->lock);
}

static int handle_event(void *arg, void *data, size_t size)
{
	struct gpumem *g = arg;
	const struct gpumem_free_event *f = data;

	if (size < sizeof(*f)) {
		g->drop_malformed++;
		return 0;
	}
	if (f->type == GPUMEM_EV_ALLOC)
		ingest_alloc(g, data, size);
	else if (f->type == GPUMEM_EV_FREE)
		ingest_free(g, f);
	else
		g->drop_malformed++;
	return 0;
}

/* ---- the libraries -------------------------------------------------------------------------- */

/* PyTorch's allocator: its pytorch:malloc and pytorch:free USDT probes (PyTorch 2.1 and later
 * have them); l->entry and l->ret set when both are attached. */
static void attach_torch(struct gpumem *g, struct gpulib *l, const char *path, const char *name)
{
	int malloc_row = cudafn__usdt_row(CUDA_LIB_PYTORCH, "malloc");
	int free_row = cudafn__usdt_row(CUDA_LIB_PYTORCH, "free");
	LIBBPF_OPTS(bpf_usdt_opts, mopts, .usdt_cookie = (__u64)malloc_row);
	LIBBPF_OPTS(bpf_usdt_opts, fopts, .usdt_cookie = (__u64)free_row);
	int err;

	l->entry = bpf_program__attach_usdt(g->skel->progs.gpumem_torch_malloc, -1, path,
					    "pytorch", "malloc", &mopts);
	l->ret = l->entry ? bpf_program__attach_usdt(g->skel->progs.gpumem_torch_free, -1, path,
						     "pytorch", "free", &fopts) :
			    NULL;
	if (!l->ret) {
		err = -errno;
		bpf_link__destroy(l->entry);
		l->entry = NULL;
		/* Without its probes the view stays by segment (cudaMalloc, cuMemCreate). */
		pr_warn("%s: no pytorch:malloc/free USDT probes to attach (%s): GPU memory by "
			"segment only\n", name, strerror(-err));
		g->attach_failed++;
		return;
	}
	pr_info("%s: PyTorch's allocator probed (pytorch:malloc, pytorch:free)\n", name);
}

/* Probes a CUDA library file (fd, opened from a mapping) for every process that maps it, now
 * or later. */
static void attach_lib(struct gpumem *g, int fd, const struct proc_map *m, const char *name,
		       enum cuda_lib lib)
{
	struct cudafn_sites *sites = calloc(1, sizeof(*sites));
	LIBBPF_OPTS(bpf_uprobe_multi_opts, opts);
	struct gpulib *l = &g->libs[g->nr_libs];
	char path[64];
	int err;

	/* The very file mapped, whichever mount namespace mapped it. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (lib == CUDA_LIB_PYTORCH) {
		attach_torch(g, l, path, name);
		goto done;
	}
	if (!sites || cudafn__find(fd, lib, sites) || !sites->nr_alloc) {
		pr_warn("%s: no CUDA memory functions found\n", name);
		g->attach_failed++;
		goto out;
	}
	opts.offsets = sites->offsets;
	opts.cookies = sites->cookies;
	opts.cnt = sites->nr;
	l->entry = bpf_program__attach_uprobe_multi(g->skel->progs.gpumem_entry, -1, path, NULL,
						    &opts);
	opts.retprobe = true;
	l->ret = l->entry ? bpf_program__attach_uprobe_multi(g->skel->progs.gpumem_return, -1,
							      path, NULL, &opts) :
			    NULL;
	if (!l->ret) {
		err = -errno;
		bpf_link__destroy(l->entry);
		l->entry = NULL;
		pr_warn("%s: cannot attach: %s\n", name, strerror(-err));
		g->attach_failed++;
		goto out;
	}
	pr_info("%s: %u CUDA functions probed\n", name, sites->nr);
done:
	if (l->entry) {
		l->dev = m->dev;
		l->ino = m->ino;
		g->nr_libs++;
	}
out:
	free(sites);
}

static bool lib_known(const struct gpumem *g, const struct proc_map *m)
{
	for (uint32_t k = 0; k < g->nr_libs; k++)
		if (g->libs[k].dev == m->dev && g->libs[k].ino == m->ino)
			return true;
	return false;
}

static void maps_cb(void *ctx, uint32_t pid, const struct proc_map *maps, uint32_t n)
{
	struct gpumem *g = ctx;

	for (uint32_t i = 0; i < n; i++) {
		int lib, fd;

		if ((i && maps[i].dso == maps[i - 1].dso && maps[i].ino == maps[i - 1].ino) ||
		    !maps[i].ino)
			continue;
		lib = cudafn__lib_of(dso__path(maps[i].dso));
		/* By the mapping's own inode: a copy elsewhere (a container's) shares the dso of
		 * the first one seen, by build ID, but a probe is on an inode. */
		if (lib < 0 || lib_known(g, &maps[i]))
			continue;
		if (g->nr_libs == MAX_LIBS) {
			g->attach_failed++;
			continue;
		}
		fd = proc_map__open(pid, &maps[i]);
		if (fd < 0)
			continue;
		attach_lib(g, fd, &maps[i], dso__path(maps[i].dso), (enum cuda_lib)lib);
		close(fd);
	}
}

static void exec_cb(void *ctx, uint32_t pid, struct proc *p)
{
	(void)p;
	drop_pid(ctx, pid);
}

static void exit_cb(void *ctx, uint32_t pid)
{
	drop_pid(ctx, pid);
}

int gpumem__observe(struct gpumem *g, struct proctab *pt)
{
	return proctab__observe(pt, &(struct proc_observer){
					    .name = "gpumem",
					    .maps = maps_cb,
					    .exec = exec_cb,
					    .exit = exit_cb,
					    .ctx = g,
				    });
}

/* ---- queries -------------------------------------------------------------------------------- */

static bool pid_wanted(const struct store_filter *f, uint32_t pid)
{
	if (!f || !f->nr_pids)
		return true;
	for (size_t i = 0; i < f->nr_pids; i++)
		if (f->pids[i] == pid)
			return true;
	return false;
}

static int glive__cmp(const void *a, const void *b)
{
	const struct glive *x = *(const struct glive *const *)a;
	const struct glive *y = *(const struct glive *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->api != y->api)
		return x->api < y->api ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->nr_frames != y->nr_frames)
		return x->nr_frames < y->nr_frames ? -1 : 1;
	return memcmp(x->frames, y->frames, x->nr_frames * sizeof(*x->frames));
}

int gpumem__live_rows(struct gpumem *g, const struct store_filter *filter,
		      struct store_row **rows_out, size_t *nr_out)
{
	struct store_row *rows = NULL;
	struct glive **all = NULL;
	size_t n = 0, nr = 0;
	int err = 0;

	*rows_out = NULL;
	*nr_out = 0;
	pthread_mutex_lock(&g->lock);
	all = malloc((g->nr_live ? g->nr_live : 1) * sizeof(*all));
	rows = calloc(g->nr_live ? g->nr_live : 1, sizeof(*rows));
	if (!all || !rows) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < g->nr_buckets; i++)
		for (struct glive *l = g->buckets[i]; l; l = l->next)
			if (pid_wanted(filter, l->pid))
				all[n++] = l;
	qsort(all, n, sizeof(*all), glive__cmp);
	for (size_t i = 0; i < n; i++) {
		const struct glive *l = all[i];
		struct frame *frames;

		if (nr && !glive__cmp(&all[i - 1], &all[i])) {
			rows[nr - 1].values[2]++;
			rows[nr - 1].values[3] += l->bytes;
			continue;
		}
		frames = malloc((l->nr_frames ? l->nr_frames : 1) * sizeof(*frames));
		if (!frames) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t k = 0; k < l->nr_frames; k++)
			frames[k] = (struct frame){ dso__get(l->frames[k].dso), l->frames[k].addr };
		rows[nr++] = (struct store_row){
			.frames = frames,
			.nr_frames = l->nr_frames,
			.pid = l->pid,
			.tid = l->tid,
			.comm = strdup(l->comm),
			.exe = strdup(l->exe),
			.values = { 0, 0, 1, l->bytes },
			.exe_path = "",
			.container_id = "",
			.service = "",
			.gpu_api = l->api,
			.gpu = l->gpu,
		};
	}
out:
	pthread_mutex_unlock(&g->lock);
	free(all);
	if (err) {
		store_rows__free(rows, nr);
		return err;
	}
	*rows_out = rows;
	*nr_out = nr;
	return 0;
}

/* ---- stats ---------------------------------------------------------------------------------- */

void gpumem__stats(struct gpumem *g, struct gpumem_stats *out)
{
	memset(out, 0, sizeof(*out));
	counters__read(bpf_map__fd(g->skel->maps.gpumem_counters), out->bpf, GPUMEM_CNT__MAX);
	pthread_mutex_lock(&g->lock);
	out->libraries = g->nr_libs;
	out->attach_failed = g->attach_failed;
	out->live = g->nr_live;
	out->live_bytes = g->live_bytes;
	out->drop_live_full = g->drop_live_full;
	out->frees_unknown = g->frees_unknown;
	out->ingested = g->ingested;
	out->drop_store = g->drop_store;
	out->drop_malformed = g->drop_malformed;
	pthread_mutex_unlock(&g->lock);
}

struct inuse {
	uint32_t pid;
	uint16_t gpu;
	uint64_t bytes;
	const char *exe;
};

static int inuse__cmp(const void *a, const void *b)
{
	const struct inuse *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

void gpumem__inuse_metrics(struct gpumem *g, struct metrics_writer *w)
{
	struct inuse *all;
	size_t n = 0;

	metrics__family(w, "autoprof_gpu_memory_inuse_bytes", METRIC_GAUGE,
			"GPU memory (CUDA) allocated and not freed, by process and device (gpu: "
			"the ordinal, \"\" when not known); pinned host memory included");
	pthread_mutex_lock(&g->lock);
	all = malloc((g->nr_live ? g->nr_live : 1) * sizeof(*all));
	for (uint32_t i = 0; all && i < g->nr_buckets; i++)
		for (struct glive *l = g->buckets[i]; l; l = l->next)
			all[n++] = (struct inuse){ l->pid, l->gpu, l->bytes, l->exe };
	if (all)
		qsort(all, n, sizeof(*all), inuse__cmp);
	for (size_t i = 0; all && i < n;) {
		struct inuse sum = all[i];
		char pid[16], gpu[8] = "";

		while (++i < n && !inuse__cmp(&all[i], &sum))
			sum.bytes += all[i].bytes;
		snprintf(pid, sizeof(pid), "%u", sum.pid);
		if (sum.gpu)
			snprintf(gpu, sizeof(gpu), "%u", sum.gpu - 1u);
		metrics__sample(w, (double)sum.bytes, "pid", pid, "exe", sum.exe, "gpu", gpu, NULL);
	}
	pthread_mutex_unlock(&g->lock);
	free(all);
}

/* ---- life cycle ----------------------------------------------------------------------------- */

struct gpumem *gpumem__new(const struct gpumem_opts *opts, struct collect_ctx *ctx, int *err)
{
	struct gpumem *g = calloc(1, sizeof(*g));

	if (!g) {
		*err = -ENOMEM;
		return NULL;
	}
	g->ctx = ctx;
	g->max_live = opts->max_live;
	pthread_mutex_init(&g->lock, NULL);
	g->ingest = ingest__new(ctx);
	if (!g->ingest) {
		*err = -ENOMEM;
		goto out_free;
	}
	g->skel = gpumem_bpf__open();
	if (!g->skel) {
		*err = -errno;
		pr_err("cannot open BPF object: %s\n", strerror(-*err));
		goto out_free;
	}
	g->skel->rodata->unwind_tables = ctx->unwinder != NULL;
	*err = collect__share_maps(ctx, g->skel->obj) ?:
	       bpf_map__set_max_entries(g->skel->maps.gpumem_events, opts->ringbuf_size);
	if (*err)
		goto out_destroy;
	*err = gpumem_bpf__load(g->skel);
	if (*err) {
		pr_err("cannot load BPF program: %s\n", strerror(-*err));
		goto out_destroy;
	}
	*err = collect__add_ring(ctx, bpf_map__fd(g->skel->maps.gpumem_events), handle_event, g,
				 &g->ring);
	if (*err)
		goto out_destroy;
	store__set_period(ctx->store, PROFILE_GPUALLOCS, 1);
	store__set_period(ctx->store, PROFILE_GPUHEAP, 1);
	return g;

out_destroy:
	gpumem__free(g);
	return NULL;
out_free:
	ingest__free(g->ingest);
	pthread_mutex_destroy(&g->lock);
	free(g);
	return NULL;
}

void gpumem__free(struct gpumem *g)
{
	if (!g)
		return;
	for (uint32_t i = 0; i < g->nr_libs; i++) {
		bpf_link__destroy(g->libs[i].ret);
		bpf_link__destroy(g->libs[i].entry);
	}
	for (uint32_t i = 0; i < g->nr_buckets; i++)
		while (g->buckets[i])
			glive__remove(g, &g->buckets[i]);
	free(g->buckets);
	gpumem_bpf__destroy(g->skel);
	ingest__free(g->ingest);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
