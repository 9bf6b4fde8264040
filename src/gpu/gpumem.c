// SPDX-License-Identifier: GPL-2.0-only
/*
 * GPU memory profiling (gpumem.h): the BPF object, the CUDA libraries it probes, the events it
 * sends and the live set they make.
 */
#define pr_fmt(fmt) "gpu: " fmt

#include <errno.h>
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
#include "lib/array.h"
#include "lib/bpfmap.h"
#include "lib/counters.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/timeconst.h"
#include "memory/memsample.h"
#include "proc/proctab.h"
#include "sample/ingest.h"
#include "store/liveset.h"
#include "store/store.h"
#include "symbolize/dso.h"

/* Library files probed at most: a host has a few CUDA installs, not hundreds. */
#define MAX_LIBS 64

_Static_assert(GPUMEM_MAX_USTACK <= INGEST_MAX_USTACK && GPUMEM_MAX_PYTHON <= INGEST_MAX_PYTHON,
	       "an allocation's stack fits the ingest path");

/* A library file probed for every process that maps it (pid -1 links). */
struct gpulib {
	uint64_t dev, ino; /* as the maps say (struct proc_map) */
	bool probed;	   /* false: looked at, not probed (no functions, attach failed) */
	struct bpf_link *entry, *ret;
};

struct gpumem {
	struct collect_ctx *ctx;
	struct gpumem_bpf *skel;
	struct ring *ring;
	struct ingest *ingest;
	struct gpulib libs[MAX_LIBS]; /* ingest thread only */
	uint32_t nr_libs;
	struct liveset *live;
	/*
	 * The processes that mapped a CUDA library or sent an allocation (ingest thread): only
	 * theirs are dropped at exec and exit. A drop walks two BPF hash maps and the live set,
	 * each as long as its buckets, empty or not: done for every process, it was a sixth of
	 * the agent's CPU under 1,000 exec/s.
	 */
	uint32_t *pids;
	uint32_t nr_pids, cap_pids;
	uint64_t torch_mean;
	/* Counters: written by the ingest thread alone, read by /metrics */
	unsigned long long attach_failed, drop_live_full, frees_unknown;
	unsigned long long ingested, drop_store, drop_malformed;
};

/* pid among g->pids: its index, or nr_pids. */
static uint32_t pid_index(const struct gpumem *g, uint32_t pid)
{
	uint32_t i = 0;

	while (i < g->nr_pids && g->pids[i] != pid)
		i++;
	return i;
}

static void pid_seen(struct gpumem *g, uint32_t pid)
{
	if (pid_index(g, pid) < g->nr_pids ||
	    array__reserve((void **)&g->pids, &g->cap_pids, g->nr_pids + 1, sizeof(*g->pids)))
		return;
	g->pids[g->nr_pids++] = pid;
}

/* A process's live set and its contexts' devices (a later process given the pid has other
 * contexts), if it ever used CUDA. */
static void drop_pid(struct gpumem *g, uint32_t pid)
{
	uint32_t i = pid_index(g, pid);

	if (i == g->nr_pids)
		return;
	g->pids[i] = g->pids[--g->nr_pids];
	liveset__drop_pid(g->live, pid);
	bpfmap__delete_pid(bpf_map__fd(g->skel->maps.gpumem_ctxdev), sizeof(struct gpumem_ctx_key),
			   pid);
	bpfmap__delete_pid(bpf_map__fd(g->skel->maps.gpumem_torch_live),
			   sizeof(struct gpumem_torch_key), pid);
}

/* ---- events --------------------------------------------------------------------------------- */

static void ingest_alloc(struct gpumem *g, const struct gpumem_alloc_event *e, size_t size)
{
	const struct cudafn *fn = cudafn__row(e->row);
	uint32_t nu = e->nr_ustack, np = e->nr_python;
	uint64_t objects = 1, bytes = e->size;
	char comm[GPUMEM_COMM_LEN + 1];
	struct ingest_stack st;
	struct ingest_raw raw;
	struct sample smp;

	if (!fn || nu > GPUMEM_MAX_USTACK || np > GPUMEM_MAX_PYTHON ||
	    size < offsetof(struct gpumem_alloc_event, stack) + (nu + 2 * np) * sizeof(__u64)) {
		g->drop_malformed++;
		return;
	}
	pid_seen(g, e->pid);
	/* Every entry is a return address, the first too (the allocating call's). */
	/* Its time too: an exec of the process still waiting in the process ring is applied
	 * first (its drop of the old image's allocations must not take this one). */
	raw = (struct ingest_raw){
		.pid = e->pid,
		.time_ns = e->time_ns,
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
	/* A sampled tensor stands for the tensors its draw passed over (memsample.h). */
	if (e->mean > 1)
		memsample__scale(e->size, e->mean, drand48(), &objects, &bytes);
	smp = (struct sample){
		.type = PROFILE_GPUALLOCS,
		.pid = e->pid,
		.tid = e->tid,
		.time_ns = e->time_ns,
		.comm = comm,
		.frames = st.frames,
		.nr_frames = st.nr_frames,
		.values = { objects, bytes, 0, 0 },
		.gpu_api = fn->api,
		.gpu = e->device <= UINT16_MAX ? (uint16_t)e->device : 0,
	};
	ingest__describe(&smp, st.proc);
	if (store__add(g->ctx->store, &smp))
		g->drop_store++;
	else
		g->ingested++;
	if (liveset__add(g->live, &(struct live_alloc){
					  .pid = e->pid,
					  .tid = e->tid,
					  .ptr = e->ptr,
					  .space = fn->space,
					  .gpu_api = fn->api,
					  .gpu = smp.gpu,
					  .objects = objects,
					  .bytes = bytes,
					  .comm = comm,
					  .exe = smp.exe,
					  .frames = st.frames,
					  .nr_frames = st.nr_frames,
				  }) == -ENOSPC)
		g->drop_live_full++;
}

static void ingest_free(struct gpumem *g, const struct gpumem_free_event *f)
{
	const struct cudafn *fn = cudafn__row(f->row);

	if (!fn)
		g->drop_malformed++;
	else if (liveset__remove(g->live, f->pid, fn->space, f->ptr))
		g->frees_unknown++;
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
	l->probed = l->entry != NULL;
out:
	/* Looked at once, probed or not: a file that cannot be is not read again at every
	 * maps read of every process that maps it. */
	l->dev = m->dev;
	l->ino = m->ino;
	g->nr_libs++;
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
		if (lib >= 0)
			pid_seen(g, pid);
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
	struct gpumem *g = ctx;
	const struct proc_map *maps;
	uint32_t n;

	/* The old image's state goes; the new one's maps were told first (maps_cb). */
	drop_pid(g, pid);
	maps = p ? proc__maps(p, &n) : NULL;
	for (uint32_t i = 0; maps && i < n; i++) {
		if (cudafn__lib_of(dso__path(maps[i].dso)) >= 0) {
			pid_seen(g, pid);
			break;
		}
	}
}

static void exit_cb(void *ctx, uint32_t pid)
{
	drop_pid(ctx, pid);
}

/* A CUDA user: its libraries are probed from its exec on. */
static bool claims_cb(void *ctx, uint32_t pid)
{
	struct gpumem *g = ctx;

	return pid_index(g, pid) < g->nr_pids;
}

int gpumem__observe(struct gpumem *g, struct proctab *pt)
{
	return proctab__observe(pt, &(struct proc_observer){
					    .name = "gpumem",
					    .maps = maps_cb,
					    .exec = exec_cb,
					    .exit = exit_cb,
					    .claims = claims_cb,
					    .ctx = g,
				    });
}

/* ---- queries ------------------------------------------------------------------------------- */

int gpumem__live_rows(struct gpumem *g, const struct store_filter *filter,
		      struct store_row **rows, size_t *nr)
{
	return liveset__rows(g->live, filter, rows, nr);
}

/* ---- stats ---------------------------------------------------------------------------------- */

void gpumem__stats(struct gpumem *g, struct gpumem_stats *out)
{
	uint64_t live, bytes;

	memset(out, 0, sizeof(*out));
	counters__read(bpf_map__fd(g->skel->maps.gpumem_counters), out->bpf, GPUMEM_CNT__MAX);
	liveset__count(g->live, &live, &bytes);
	out->live = live;
	out->live_bytes = bytes;
	for (uint32_t i = 0; i < g->nr_libs; i++)
		out->libraries += g->libs[i].probed;
	out->attach_failed = g->attach_failed;
	out->drop_live_full = g->drop_live_full;
	out->frees_unknown = g->frees_unknown;
	out->ingested = g->ingested;
	out->drop_store = g->drop_store;
	out->drop_malformed = g->drop_malformed;
	out->torch_mean = g->torch_mean;
}

/* The live set by (pid, device), for the metric. */
struct inuse {
	uint32_t pid;
	uint16_t gpu;
	uint64_t bytes;
	char exe[64];
};

struct inuse_list {
	struct inuse *v;
	uint32_t n, cap;
};

static void inuse__add(const struct live_alloc *a, void *arg)
{
	struct inuse_list *l = arg;
	struct inuse *v;

	for (uint32_t i = 0; i < l->n; i++) {
		if (l->v[i].pid == a->pid && l->v[i].gpu == a->gpu) {
			l->v[i].bytes += a->bytes;
			return;
		}
	}
	if (array__reserve((void **)&l->v, &l->cap, (uint64_t)l->n + 1, sizeof(*l->v)))
		return;
	v = &l->v[l->n++];
	*v = (struct inuse){ a->pid, a->gpu, a->bytes, "" };
	snprintf(v->exe, sizeof(v->exe), "%s", a->exe);
}

static int inuse__cmp(const void *a, const void *b)
{
	const struct inuse *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

void gpumem__inuse_metrics(struct gpumem *g, struct metrics_writer *w)
{
	struct inuse_list l = { 0 };

	metrics__family(w, "autoprof_gpu_memory_inuse_bytes", METRIC_GAUGE,
			"GPU memory (CUDA) allocated and not freed, by process and device (gpu: "
			"the ordinal, \"\" when not known); pinned host memory and PyTorch's tensors "
			"(inside its segments) included");
	/* Processes holding GPU memory are few: a list, not a table. */
	liveset__for_each(g->live, inuse__add, &l);
	qsort(l.v, l.n, sizeof(*l.v), inuse__cmp);
	for (size_t i = 0; i < l.n; i++) {
		char pid[16], gpu[8] = "";

		snprintf(pid, sizeof(pid), "%u", l.v[i].pid);
		if (l.v[i].gpu)
			snprintf(gpu, sizeof(gpu), "%u", l.v[i].gpu - 1u);
		metrics__sample(w, (double)l.v[i].bytes, "pid", pid, "exe", l.v[i].exe, "gpu", gpu,
				NULL);
	}
	free(l.v);
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
	g->live = liveset__new(opts->max_live);
	g->ingest = ingest__new(ctx);
	if (!g->ingest || !g->live) {
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
	g->skel->rodata->wakeup_bytes = opts->ringbuf_size / 4;
	g->torch_mean = opts->torch_mean ? opts->torch_mean : 1;
	g->skel->rodata->torch_mean = g->torch_mean;
	memsample__exp_table((uint32_t *)g->skel->rodata->exp_table, GPUMEM_EXP_TABLE,
			     GPUMEM_EXP_SHIFT);
	*err = collect__share_maps(ctx, g->skel->obj) ?:
	       bpf_map__set_max_entries(g->skel->maps.gpumem_events, opts->ringbuf_size) ?:
	       bpf_map__set_max_entries(g->skel->maps.gpumem_torch_live, opts->max_live);
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
	liveset__free(g->live);
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
	liveset__free(g->live);
	free(g->pids);
	gpumem_bpf__destroy(g->skel);
	ingest__free(g->ingest);
	free(g);
}
