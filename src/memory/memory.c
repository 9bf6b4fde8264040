// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory profiling: the user side of bpf/memory.bpf.c. Attach mode: finds the object of each
 * target process that defines its allocator, places uprobes on cheap instructions of malloc,
 * calloc, realloc, free and the rest of the family (lib/x86insn.c), attaches them for that
 * process only (uprobe_multi links with a pid). Preload mode: a target that maps the preload
 * shim (preload/autoprof_preload.c, found by its autoprof_preload_v1 symbol) samples in
 * process; only the shim's two markers are probed. Either way, ingests sampled allocations
 * (into the store: allocs) and the frees of sampled allocations (the live table here: heap).
 */
#define pr_fmt(fmt) "memory: " fmt

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/counters.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/procfs.h"
#include "lib/procmem.h"
#include "store/store.h"
#include "symbolize/dso.h"
#include "lib/procmaps.h"
#include "lib/timeconst.h"
#include "proc/proctab.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"
#include "bpf/memory_abi.h"
#include "bpf/unwind_abi.h"
#include "bpf/memory.skel.h"
#include "sample/ingest.h"
#include "memory/memory.h"
#include "memory/memsample.h"
#include "memory/memsites.h"
#include "memory/preload.h"

/* How long a new target process may take to map its allocator (ld.so maps libc within ms). */
#define ATTACH_WAIT_NS (10 * NSEC_PER_SEC)
#define MAX_CANDIDATES 64
#define LIVE_BUCKETS_MIN 1024
#define GO_DEFAULT_RATE (512 * 1024)
/* Thread names of preload samples, cached (direct-mapped by tid) and read again after a while. */
#define THREAD_NAMES 256
#define THREAD_NAME_TTL_NS (10 * NSEC_PER_SEC)

struct thread_name {
	uint32_t pid, tid;
	uint64_t read_ns;
	char comm[MEMORY_COMM_LEN];
};

/* How a process is profiled (enum memsites_mode): its allocator probed, the preload shim's
 * ring, or Go's own sampled path. Also the "mode" the API shows. */
static const char *const mode_names[] = {
	[MEMSITES_ATTACH] = "attach",
	[MEMSITES_PRELOAD] = "preload",
	[MEMSITES_GO] = "go",
};


struct target {
	uint32_t id;
	bool removed;
	struct memtarget_spec spec;
	/* A pid target's process, by its start (procfs__start_ticks): the pid alone would match
	 * whatever process the kernel gives it after that one exits. */
	unsigned long long start;
};

/* A process matched by a target: attached, or waiting for its allocator to be mapped. */
struct mproc {
	struct mproc *next;
	uint32_t pid;
	bool attached;
	enum memsites_mode mode;
	bool seen; /* mark for a rescan */
	struct preload_ring *pring; /* preload: the shim's ring */
	/* Go: the runtime's functions (run-time addresses; they lead stacks), MemProfileRate's
	 * address, read through mem_fd at each sample */
	struct memsite_range *go_rt;
	size_t nr_go_rt;
	/* Others: the functions that only pass an allocation on (operator new...), sorted */
	struct memsite_range *wrap;
	size_t nr_wrap;
	uint64_t go_rate_addr;
	int mem_fd;
	uint64_t deadline_ns;
	char exe[256];
	char object[PATH_MAX]; /* the file defining malloc */
	struct bpf_link *entry, *ret;
};

/* A live sampled allocation. */
struct live {
	struct live *next;
	uint32_t pid, tid;
	uint64_t ptr;
	uint64_t objects, bytes; /* what it stands for, scaled */
	char comm[MEMORY_COMM_LEN + 1];
	uint32_t nr_frames;
	struct frame *frames; /* dso references held */
};

_Static_assert(MEMORY_MAX_USTACK <= INGEST_MAX_USTACK && MEMORY_MAX_PYTHON <= INGEST_MAX_PYTHON,
	       "an allocation's stack fits the ingest path");

struct memory {
	struct collect_ctx *ctx;
	struct memory_bpf *skel;
	struct ring *ring;
	uint64_t mean;
	uint64_t ringbuf_size;
	pthread_mutex_t lock; /* targets, procs, live: the API and queries read them */
	struct target *targets;
	uint32_t nr_targets, next_id;
	bool dirty; /* targets changed: rescan at the next tick */
	struct mproc *procs;
	struct live **buckets;
	uint32_t nr_buckets, nr_live;
	uint64_t live_bytes;
	unsigned long long ingested, drop_store, drop_malformed, attach_ok, attach_failed;
	unsigned long long probes_emulated, probes_entry;
	/* preload rings: records read (allocations, frees), and what the closed rings had */
	unsigned long long preload_allocs, preload_frees, preload_unwound_truncated;
	struct preload_ring_stats preload_gone;
	struct ingest *ingest;			 /* stacks to frames, as every sampler */
	struct memory_alloc_event pev;		 /* a preload record as an event */
	struct thread_name tnames[THREAD_NAMES]; /* preload records' thread names */
	struct unwind_proc uproc;      /* the mapping table its walk uses */
};

static void preload_close(struct memory *m, struct mproc *p);
static void preload_drain(struct memory *m, struct mproc *p);

/* ---- the live table ------------------------------------------------------------------------- */

static uint32_t live_hash(uint32_t pid, uint64_t ptr)
{
	uint64_t h = (ptr >> 4) * 0x9e3779b97f4a7c15ULL ^ pid * 0xff51afd7ed558ccdULL;

	return (uint32_t)(h >> 32);
}

static void live__free(struct live *l)
{
	for (uint32_t i = 0; i < l->nr_frames; i++)
		dso__put(l->frames[i].dso);
	free(l->frames);
	free(l);
}

static int live__grow(struct memory *m)
{
	uint32_t n = m->nr_buckets ? m->nr_buckets * 2 : LIVE_BUCKETS_MIN;
	struct live **b;

	if (m->nr_live < m->nr_buckets)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->nr_buckets; i++) {
		while (m->buckets[i]) {
			struct live *l = m->buckets[i];

			m->buckets[i] = l->next;
			l->next = b[live_hash(l->pid, l->ptr) & (n - 1)];
			b[live_hash(l->pid, l->ptr) & (n - 1)] = l;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nr_buckets = n;
	return 0;
}

/* The slot pointing at (pid, ptr)'s entry, or at the NULL ending its chain. */
static struct live **live__find(struct memory *m, uint32_t pid, uint64_t ptr)
{
	struct live **pp;

	if (!m->nr_buckets)
		return NULL;
	pp = &m->buckets[live_hash(pid, ptr) & (m->nr_buckets - 1)];
	while (*pp && ((*pp)->pid != pid || (*pp)->ptr != ptr))
		pp = &(*pp)->next;
	return pp;
}

static void live__remove(struct memory *m, struct live **pp)
{
	struct live *l = *pp;

	*pp = l->next;
	m->nr_live--;
	m->live_bytes -= l->bytes;
	live__free(l);
}

/* Drops every live allocation of pid, here and in BPF. */
static void live__drop_pid(struct memory *m, uint32_t pid)
{
	int fd = bpf_map__fd(m->skel->maps.memory_live);
	struct memory_key key, next, *prev = NULL;

	for (uint32_t i = 0; i < m->nr_buckets; i++) {
		struct live **pp = &m->buckets[i];

		while (*pp) {
			if ((*pp)->pid == pid)
				live__remove(m, pp);
			else
				pp = &(*pp)->next;
		}
	}
	/* BPF may hold entries user space never heard of (a lost event): walk the map itself. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (prev && prev->pid == pid)
			bpf_map_delete_elem(fd, prev);
		key = next;
		prev = &key;
	}
	if (prev && prev->pid == pid)
		bpf_map_delete_elem(fd, prev);
}

/* ---- finding and probing the allocator ------------------------------------------------------ */
struct candidate {
	struct map_entry e; /* its first mapping */
	uint64_t lo, hi;    /* the span of all its mappings */
	char path[PATH_MAX];
	bool is_exe;
	bool is_libc; /* the C library: last in line (see candidate__cmp) */
};

struct candidates {
	struct candidate *c;
	int nr;
	const char *exe_path;
};

static int add_candidate(const struct map_entry *e, void *arg)
{
	struct candidates *cs = arg;
	struct candidate *c;
	const char *base;

	if (!e->path[0] || e->path[0] != '/' || cs->nr == MAX_CANDIDATES)
		return 0;
	for (int i = 0; i < cs->nr; i++) {
		c = &cs->c[i];
		if (c->e.inode == e->inode && c->e.dev_major == e->dev_major &&
		    c->e.dev_minor == e->dev_minor) {
			c->lo = e->start < c->lo ? e->start : c->lo;
			c->hi = e->end > c->hi ? e->end : c->hi;
			return 0;
		}
	}
	c = &cs->c[cs->nr++];
	c->e = *e;
	c->lo = e->start;
	c->hi = e->end;
	snprintf(c->path, sizeof(c->path), "%s", e->path);
	c->e.path = c->path;
	c->is_exe = !strcmp(c->path, cs->exe_path);
	base = strrchr(c->path, '/') + 1;
	c->is_libc = !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
		     !strncmp(base, "ld-musl-", 8);
	return 0;
}

/*
 * The order in which symbol lookup would find malloc: the executable first, then libraries in
 * load order, guessed from addresses (ld.so maps each one below the last, so the highest was
 * loaded first: LD_PRELOAD before the others), with the C library last. Addresses alone put
 * libc first now and then (mmap fills a hole above an earlier library that is big enough: 4
 * runs in 60 of a program linked with -ljemalloc), and libc is last in practice: it comes
 * after every library the program names (-lc is the linker's last), and one defining malloc
 * besides it is there to replace it.
 */
static int candidate__cmp(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->is_exe != y->is_exe)
		return x->is_exe ? -1 : 1;
	if (x->is_libc != y->is_libc)
		return x->is_libc ? 1 : -1;
	return x->e.start < y->e.start ? 1 : x->e.start > y->e.start ? -1 : 0;
}

/* The entries (ret false) or the returns of sites, to prog. */
static struct bpf_link *attach_sites(struct bpf_program *prog, const struct mproc *p,
				     const char *path, const struct memsite *sites, int nr,
				     bool ret)
{
	unsigned long offs[MEMSITES_MAX];
	__u64 cookies[MEMSITES_MAX];
	LIBBPF_OPTS(bpf_uprobe_multi_opts, opts, .offsets = offs, .cookies = cookies,
		    .retprobe = ret);
	size_t n = 0;

	for (int i = 0; i < nr; i++) {
		if (ret && !sites[i].ret)
			continue;
		offs[n] = sites[i].offset;
		cookies[n++] = sites[i].fn;
	}
	opts.cnt = n;
	return bpf_program__attach_uprobe_multi(prog, (pid_t)p->pid, path, NULL, &opts);
}

/* A Go process: its runtime's ranges and rate at run-time addresses (text: the mapping of the
 * executable's code). Takes ms->go_rt. */
static void mproc__set_go(struct mproc *p, struct memsites *ms, const struct map_entry *text)
{
	uint64_t bias = text->start - text->pgoff + (uint64_t)ms->go_text_delta;

	for (size_t i = 0; i < ms->nr_go_rt; i++) {
		ms->go_rt[i].lo += bias;
		ms->go_rt[i].hi += bias;
	}
	p->go_rt = ms->go_rt;
	p->nr_go_rt = ms->nr_go_rt;
	ms->go_rt = NULL;
	ms->nr_go_rt = 0;
	p->go_rate_addr = ms->go_rate_vaddr ? ms->go_rate_vaddr + bias : 0;
	p->mem_fd = p->go_rate_addr ? procmem__open(p->pid) : -1;
}

/* The wrappers of malloc (memsites__wrappers) in every file p maps. */
static void mproc__find_wrappers(struct mproc *p, const struct candidate *cands, int nr)
{
	size_t cap = 0;

	for (int i = 0; i < nr; i++) {
		int fd = maps__open_file((int)p->pid, &cands[i].e);

		if (fd < 0)
			continue;
		memsites__wrappers(fd, &cands[i].e, &p->wrap, &p->nr_wrap, &cap);
		close(fd);
	}
	memsite_ranges__sort(p->wrap, p->nr_wrap);
}

/* Attaches p's allocator. 0, -EAGAIN (not mapped yet) or another negative errno. */
static int mproc__attach(struct memory *m, struct mproc *p, uint64_t now)
{
	struct candidate *cands = calloc(MAX_CANDIDATES, sizeof(*cands));
	struct candidates cs = { cands, 0, NULL };
	struct memsites ms = { 0 };
	char exe[PATH_MAX], link[64];
	int err = -EAGAIN, nr = 0;
	enum memsites_mode mode;
	ssize_t len;

	if (!cands)
		return -ENOMEM;
	snprintf(link, sizeof(link), "/proc/%u/exe", p->pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	cs.exe_path = exe;
	err = maps__for_each((int)p->pid, true, add_candidate, &cs);
	if (err)
		goto out;
	qsort(cands, cs.nr, sizeof(*cands), candidate__cmp);
	err = -EAGAIN;
	for (int i = 0; i < cs.nr; i++) {
		char path[PATH_MAX + 64];
		int fd = maps__open_file((int)p->pid, &cands[i].e);

		if (fd < 0)
			continue;
		memsites__release(&ms);
		nr = memsites__find(fd, &cands[i].e, &ms);
		close(fd);
		m->probes_emulated += ms.emulated;
		m->probes_entry += ms.entry;
		if (!nr)
			continue;
		mode = ms.mode;
		/* The very file mapped, whatever mount namespace or deletion. */
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, p->pid,
			 cands[i].e.start, cands[i].e.end);
		if (mode == MEMSITES_PRELOAD) {
			/* The ring, and the flush marker only: no probe on the allocator. */
			p->pring = preload_ring__open(p->pid, ms.preload_rec, &err);
			/* Mapped, but its constructor has not made the ring yet: again later. */
			if (!p->pring && err == -EAGAIN)
				goto out;
			if (!p->pring) {
				pr_warn("pid %u: cannot read the preload shim's ring (%s): %s\n",
					p->pid, cands[i].path,
					err == -EPROTO ? "not this autoprof's version" :
							 strerror(-err));
				goto out;
			}
			p->entry = attach_sites(m->skel->progs.memory_marker, p, path, ms.sites,
						nr, false);
		} else if (mode == MEMSITES_GO) {
			/* Entries only: Go moves stacks, which a uretprobe does not survive. */
			p->entry = attach_sites(m->skel->progs.memory_go, p, path, ms.sites, nr,
						false);
		} else {
			p->entry = attach_sites(m->skel->progs.memory_entry, p, path, ms.sites,
						nr, false);
			p->ret = p->entry ? attach_sites(m->skel->progs.memory_return, p, path,
							 ms.sites, nr, true) :
					    NULL;
		}
		if (!p->entry || (mode == MEMSITES_ATTACH && !p->ret)) {
			err = -errno;
			bpf_link__destroy(p->entry);
			p->entry = NULL;
			preload_close(m, p);
			pr_warn("pid %u: cannot attach to %s: %s\n", p->pid, cands[i].path,
				strerror(-err));
			goto out;
		}
		snprintf(p->object, sizeof(p->object), "%s", cands[i].path);
		p->attached = true;
		p->mode = mode;
		if (mode == MEMSITES_GO)
			mproc__set_go(p, &ms, &cands[i].e);
		else
			mproc__find_wrappers(p, cands, cs.nr);
		err = 0;
		/* Its mappings now include the allocator's object: the unwinder must know them,
		 * and a CPython process's samples carry Python frames from the first one on (the
		 * refresh tells every observer of processes, the unwinder's and Python's). */
		proctab__refresh(m->ctx->proctab, p->pid, now);
		if (mode == MEMSITES_PRELOAD)
			pr_info("pid %u (%s): preload shim %s, its ring read\n", p->pid, p->exe,
				cands[i].path);
		else if (mode == MEMSITES_GO)
			pr_info("pid %u (%s): Go runtime's sampled path probed (%s)\n", p->pid,
				p->exe, nr > 1 ? "allocations and frees" : "allocations only");
		else
			pr_info("pid %u (%s): %d allocator functions probed in %s\n", p->pid,
				p->exe, nr, cands[i].path);
		break;
	}
out:
	memsites__release(&ms);
	free(cands);
	return err;
}

/* Keeps what a ring counted once it is closed. */
static void preload_close(struct memory *m, struct mproc *p)
{
	if (!p->pring)
		return;
	preload_ring__add_stats(p->pring, &m->preload_gone);
	preload_ring__close(p->pring);
	p->pring = NULL;
}

static void mproc__detach(struct memory *m, struct mproc *p)
{
	preload_close(m, p);
	bpf_link__destroy(p->ret);
	bpf_link__destroy(p->entry);
	p->ret = p->entry = NULL;
	if (p->attached)
		live__drop_pid(m, p->pid);
	p->attached = false;
	p->mode = MEMSITES_ATTACH;
	free(p->go_rt);
	p->go_rt = NULL;
	p->nr_go_rt = 0;
	free(p->wrap);
	p->wrap = NULL;
	p->nr_wrap = 0;
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	p->mem_fd = -1;
}

/* ---- targets -------------------------------------------------------------------------------- */

/* The executable's basename, "" when the process is gone or a kernel thread. */
static void read_exe(uint32_t pid, char *out, size_t n)
{
	char link[64], path[PATH_MAX];
	ssize_t len;
	char *base;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	len = readlink(link, path, sizeof(path) - 1);
	out[0] = '\0';
	if (len <= 0)
		return;
	path[len] = '\0';
	if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
		path[len - 10] = '\0';
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	len = (ssize_t)strnlen(base, n - 1);
	memcpy(out, base, len);
	out[len] = '\0';
}

/* What a match may need of a process, read once per lookup: its /proc/PID/cgroup
 * (cgroup_len < 0: not yet) and its start (start_read). */
struct proc_facts {
	ssize_t cgroup_len;
	bool start_read;
	unsigned long long start;
	char cgroup[2048];
};

static bool target__matches(const struct target *t, uint32_t pid, const char *exe,
			    struct proc_facts *facts)
{
	if (t->spec.pid) {
		if (t->spec.pid != pid)
			return false;
		if (!facts->start_read) {
			facts->start = procfs__start_ticks(pid);
			facts->start_read = true;
		}
		return facts->start == t->start;
	}
	if (!t->spec.is_cgroup)
		return memtarget__match(t->spec.pattern, exe);
	if (facts->cgroup_len < 0) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		facts->cgroup_len = fd < 0 ? 0 : read(fd, facts->cgroup, sizeof(facts->cgroup) - 1);
		if (facts->cgroup_len < 0)
			facts->cgroup_len = 0;
		facts->cgroup[facts->cgroup_len] = '\0';
		if (fd >= 0)
			close(fd);
	}
	return memcg__match(&t->spec.cgroup, facts->cgroup);
}

static bool matches_any(struct memory *m, uint32_t pid, const char *exe)
{
	struct proc_facts facts = { .cgroup_len = -1 };

	for (uint32_t i = 0; i < m->nr_targets; i++) {
		const struct target *t = &m->targets[i];

		if (!t->removed && target__matches(t, pid, exe, &facts))
			return true;
	}
	return false;
}

static struct mproc **mproc__find(struct memory *m, uint32_t pid)
{
	struct mproc **pp = &m->procs;

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static void mproc__remove(struct memory *m, struct mproc **pp)
{
	struct mproc *p = *pp;

	*pp = p->next;
	mproc__detach(m, p);
	free(p);
}

/* Starts tracking pid if a target matches it and it is not tracked yet. */
static void consider(struct memory *m, uint32_t pid, const char *exe, uint64_t now)
{
	struct mproc *p, **pp = mproc__find(m, pid);

	if (*pp) {
		(*pp)->seen = true;
		return;
	}
	if (!matches_any(m, pid, exe) || pid == (uint32_t)getpid())
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->pid = pid;
	p->mem_fd = -1;
	p->seen = true;
	p->deadline_ns = now + ATTACH_WAIT_NS;
	snprintf(p->exe, sizeof(p->exe), "%s", exe);
	p->next = m->procs;
	m->procs = p;
}

/* Every process against the targets: after a change through the API, and at start. */
static void rescan(struct memory *m, uint64_t now)
{
	struct dirent *de;
	DIR *dir = opendir("/proc");

	for (struct mproc *p = m->procs; p; p = p->next)
		p->seen = false;
	while (dir && (de = readdir(dir))) {
		char exe[256];
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid)
			continue;
		read_exe((uint32_t)pid, exe, sizeof(exe));
		if (exe[0])
			consider(m, (uint32_t)pid, exe, now);
	}
	if (dir)
		closedir(dir);
	/* Drop processes no target matches any more. */
	for (struct mproc **pp = &m->procs; *pp;) {
		if (!(*pp)->seen || !matches_any(m, (*pp)->pid, (*pp)->exe))
			mproc__remove(m, pp);
		else
			pp = &(*pp)->next;
	}
	/* Forget removed targets for good. */
	for (uint32_t i = 0; i < m->nr_targets;) {
		if (m->targets[i].removed)
			m->targets[i] = m->targets[--m->nr_targets];
		else
			i++;
	}
}

void memory__tick(struct memory *m)
{
	uint64_t now = now_ns();

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	if (m->dirty) {
		m->dirty = false;
		rescan(m, now);
	}
	for (struct mproc **pp = &m->procs; *pp;) {
		struct mproc *p = *pp;
		int err;

		if (p->attached) {
			pp = &p->next;
			continue;
		}
		err = mproc__attach(m, p, now);
		if (!err) {
			m->attach_ok++;
		} else if (err != -EAGAIN || now >= p->deadline_ns) {
			m->attach_failed++;
			pr_info("pid %u (%s): not memory-profiled: %s\n", p->pid, p->exe,
				err == -EAGAIN ? "no object defines malloc and free" :
						 strerror(-err));
			mproc__remove(m, pp);
			continue;
		}
		pp = &p->next;
	}
	pthread_mutex_unlock(&m->lock);
	for (struct mproc *p = m->procs; p; p = p->next)
		preload_drain(m, p);
}

/* Ingest thread: a process exec'd (exit false) or exited (after the drain). */
static void proc_event(struct memory *m, uint32_t pid, bool exit)
{
	struct mproc **pp;
	char exe[256];

	/* A preload ring outlives its process (we map it): what it wrote last still counts. */
	pp = mproc__find(m, pid);
	if (*pp)
		preload_drain(m, *pp);
	pthread_mutex_lock(&m->lock);
	pp = mproc__find(m, pid);
	/* A new image or none: the old one's probes and live set are gone with it. */
	if (*pp)
		mproc__remove(m, pp);
	if (!exit && m->nr_targets) {
		read_exe(pid, exe, sizeof(exe));
		consider(m, pid, exe, now_ns());
	}
	pthread_mutex_unlock(&m->lock);
}

static void exec_cb(void *ctx, uint32_t pid, struct proc *p)
{
	(void)p;
	proc_event(ctx, pid, false);
}

static void exit_cb(void *ctx, uint32_t pid)
{
	proc_event(ctx, pid, true);
}

int memory__observe(struct memory *m, struct proctab *pt)
{
	return proctab__observe(pt, &(struct proc_observer){
					    .name = "memory",
					    .exec = exec_cb,
					    .exit = exit_cb,
					    .ctx = m,
				    });
}

int memory__add_target(struct memory *m, const struct memtarget_spec *spec, uint32_t *id)
{
	unsigned long long start = spec->pid ? procfs__start_ticks(spec->pid) : 0;
	struct target *t;

	if (spec->pid && !start)
		return -ESRCH;
	pthread_mutex_lock(&m->lock);
	/* Removed targets stay in the array until the next tick: they do not count. */
	for (uint32_t i = 0, active = 0; i < m->nr_targets; i++) {
		active += !m->targets[i].removed;
		if (active >= MEMORY_MAX_TARGETS) {
			pthread_mutex_unlock(&m->lock);
			return -ENOSPC;
		}
	}
	t = realloc(m->targets, (m->nr_targets + 1) * sizeof(*t));
	if (!t) {
		pthread_mutex_unlock(&m->lock);
		return -ENOMEM;
	}
	m->targets = t;
	t = &m->targets[m->nr_targets++];
	t->id = *id = ++m->next_id;
	t->removed = false;
	t->spec = *spec;
	t->start = start;
	m->dirty = true;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

int memory__remove_target(struct memory *m, uint32_t id)
{
	int err = -ENOENT;

	pthread_mutex_lock(&m->lock);
	for (uint32_t i = 0; i < m->nr_targets; i++) {
		if (m->targets[i].id == id && !m->targets[i].removed) {
			m->targets[i].removed = true;
			m->dirty = true;
			err = 0;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* One target's entry, with the processes it matches now. NULL when out of memory. */
static json_t *target_json(struct memory *m, const struct target *t)
{
	json_t *procs = json_array(), *what;
	const char *key;
	int err = 0;

	for (struct mproc *p = m->procs; !err && p; p = p->next) {
		struct proc_facts facts = { .cgroup_len = -1 };

		if (!target__matches(t, p->pid, p->exe, &facts))
			continue;
		err = json_array_append_new(procs, json_pack("{s:I,s:b,s:s,s:o}", "pid",
							     (json_int_t)p->pid, "attached",
							     p->attached, "mode",
							     mode_names[p->mode], "object",
							     json__str(p->object)));
	}
	if (err) {
		json_decref(procs);
		return NULL;
	}
	if (t->spec.pid) {
		key = "pid";
		what = json_integer(t->spec.pid);
	} else if (t->spec.is_cgroup) {
		key = "cgroup";
		what = json__str(t->spec.cgroup.dir);
	} else {
		key = "exe";
		what = json__str(t->spec.pattern);
	}
	return json_pack("{s:I,s:o,s:o}", "id", (json_int_t)t->id, key, what, "processes", procs);
}

int memory__list_targets(struct memory *m, struct buf *out)
{
	json_t *list = json_array();
	int err = 0;

	pthread_mutex_lock(&m->lock);
	for (uint32_t i = 0; !err && i < m->nr_targets; i++)
		if (!m->targets[i].removed)
			err = json_array_append_new(list, target_json(m, &m->targets[i]));
	pthread_mutex_unlock(&m->lock);
	if (err) {
		json_decref(list);
		return -ENOMEM;
	}
	return json__writeln(out, list, JSON_COMPACT);
}

/* ---- ingest --------------------------------------------------------------------------------- */

static bool in_ranges(const struct memsite_range *r, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pc < r[mid].lo)
			hi = mid;
		else if (pc >= r[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/*
 * How many leading frames of a sample are not the program's: a Go sample's runtime frames
 * (mProf_Malloc, mallocgc, newobject...), another's wrappers of malloc (C++ operator new, Rust's
 * __rust_alloc...), by address. The sample belongs to the first frame after them, the Go
 * function that allocated or the caller of new; a stack of them alone (the runtime's own
 * allocations) is kept whole. *mean: a Go process's MemProfileRate.
 */
static uint32_t lead_frames(struct memory *m, const struct memory_alloc_event *e, uint64_t *mean)
{
	struct mproc *p;
	uint32_t n = 0;

	pthread_mutex_lock(&m->lock);
	p = *mproc__find(m, e->pid);
	if (p && p->mode == MEMSITES_GO) {
		int64_t rate = 0;

		while (n < e->nr_ustack && in_ranges(p->go_rt, p->nr_go_rt, e->stack[n]))
			n++;
		if (n == e->nr_ustack)
			n = 0;
		if (p->mem_fd < 0 ||
		    procmem__read(p->mem_fd, p->go_rate_addr, &rate, sizeof(rate)) || rate <= 0)
			rate = GO_DEFAULT_RATE;
		*mean = (uint64_t)rate;
	} else if (p && p->nr_wrap) {
		/* Return addresses: the call may be a wrapper's last instruction. */
		while (n < e->nr_ustack && in_ranges(p->wrap, p->nr_wrap, e->stack[n] - 1))
			n++;
		if (n == e->nr_ustack)
			n = 0;
	}
	pthread_mutex_unlock(&m->lock);
	return n;
}

static void ingest_alloc(struct memory *m, const struct memory_alloc_event *e, size_t size)
{
	struct collect_ctx *ctx = m->ctx;
	char comm[MEMORY_COMM_LEN + 1];
	uint64_t objects, bytes;
	struct ingest_stack st;
	struct ingest_raw raw;
	struct sample smp;
	struct proc *p;
	uint32_t nu = e->nr_ustack, np = e->nr_python;
	struct live *l, **pp;
	struct mproc *p_tracked;
	uint64_t mean = e->mean;
	uint32_t skip = 0;

	if (nu > MEMORY_MAX_USTACK || np > MEMORY_MAX_PYTHON ||
	    size < offsetof(struct memory_alloc_event, stack) + (nu + 2 * np) * sizeof(__u64)) {
		m->drop_malformed++;
		return;
	}
	skip = lead_frames(m, e, &mean);
	/* Every entry is a return address, the first too (the allocating call's). */
	raw = (struct ingest_raw){
		.pid = e->pid,
		.ustack = &e->stack[skip],
		.nr_ustack = nu - skip,
		.utruncated = !!(e->flags & MEMORY_F_USTACK_TRUNCATED),
		.python = np ? &e->stack[nu] : NULL,
		.nr_python = np,
	};
	if (ingest__resolve(m->ingest, &raw, now_ns(), &st)) {
		m->drop_malformed++;
		return;
	}
	p = st.proc;
	nu = st.nr_frames;
	memcpy(comm, e->comm, MEMORY_COMM_LEN);
	comm[MEMORY_COMM_LEN] = '\0';
	memsample__scale(e->size, mean ? mean : m->mean, drand48(), &objects, &bytes);
	smp = (struct sample){
		.type = PROFILE_ALLOCS,
		.pid = e->pid,
		.tid = e->tid,
		.time_ns = e->time_ns,
		.comm = comm,
		.frames = st.frames,
		.nr_frames = nu,
		.values = { objects, bytes, 0, 0 },
	};
	ingest__describe(&smp, p);
	if (store__add(ctx->store, &smp))
		m->drop_store++;
	else
		m->ingested++;
	if (e->flags & MEMORY_F_UNTRACKED)
		return;

	pthread_mutex_lock(&m->lock);
	/* A sample drained after its process was detached (exec, exit, target removed): its
	 * live set is gone, and this would stay in it for good. */
	p_tracked = *mproc__find(m, e->pid);
	if (!p_tracked || !p_tracked->attached || live__grow(m))
		goto out;
	pp = live__find(m, e->pid, e->ptr);
	/* Its free was lost (or it was never seen): this allocation replaces it. */
	if (*pp)
		live__remove(m, pp);
	l = calloc(1, sizeof(*l));
	if (!l)
		goto out;
	l->frames = malloc((nu ? nu : 1) * sizeof(*l->frames));
	if (!l->frames) {
		free(l);
		goto out;
	}
	*l = (struct live){ .pid = e->pid, .tid = e->tid, .ptr = e->ptr, .objects = objects,
			    .bytes = bytes, .nr_frames = nu, .frames = l->frames };
	memcpy(l->comm, comm, sizeof(l->comm));
	for (uint32_t i = 0; i < nu; i++)
		l->frames[i] = (struct frame){ dso__get(st.frames[i].dso), st.frames[i].addr };
	l->next = m->buckets[live_hash(l->pid, l->ptr) & (m->nr_buckets - 1)];
	m->buckets[live_hash(l->pid, l->ptr) & (m->nr_buckets - 1)] = l;
	m->nr_live++;
	m->live_bytes += bytes;
out:
	pthread_mutex_unlock(&m->lock);
}

static void live__forget(struct memory *m, uint32_t pid, uint64_t ptr)
{
	struct live **pp;

	pthread_mutex_lock(&m->lock);
	pp = live__find(m, pid, ptr);
	if (pp && *pp)
		live__remove(m, pp);
	pthread_mutex_unlock(&m->lock);
}

/* ---- preload rings -------------------------------------------------------------------------- */

struct drain {
	struct memory *m;
	struct mproc *p;
	bool looked_up, have_proc; /* the unwinder's mapping table of the process, in m->uproc */
};

/* The stack of a preload record, walked from the copy the shim made (ours: no trap there). */
static uint32_t preload_walk(struct drain *d, const struct autoprof_preload_rec *r,
			     const void *stack, uint64_t *pcs, bool *truncated)
{
	struct unwinder *u = d->m->ctx->unwinder;

	if (!d->looked_up) {
		d->looked_up = true;
		d->have_proc = u && !unwinder__proc(u, d->p->pid, &d->m->uproc);
	}
	return unwinder__walk_copy(u, d->have_proc ? &d->m->uproc : NULL, r->pc, r->sp, r->bp,
				   stack, r->stack_len, pcs, MEMORY_MAX_USTACK, truncated);
}

/*
 * The name of thread tid of pid into comm (MEMORY_COMM_LEN bytes, NUL-padded): a preload record
 * has none (the shim would need a system call per sample), so it is read from /proc, cached.
 * The executable's name when the thread is gone.
 */
static void thread_comm(struct memory *m, const struct mproc *p, uint32_t tid, char *comm)
{
	struct thread_name *t = &m->tnames[(tid * 2654435761u) >> 24 & (THREAD_NAMES - 1)];
	uint64_t now = now_ns();
	char path[64];
	ssize_t n = -1;
	int fd;

	if (t->pid == p->pid && t->tid == tid && now - t->read_ns < THREAD_NAME_TTL_NS) {
		memcpy(comm, t->comm, MEMORY_COMM_LEN);
		return;
	}
	memset(comm, 0, MEMORY_COMM_LEN);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", p->pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, MEMORY_COMM_LEN - 1);
		close(fd);
	}
	if (n <= 0) {
		memset(comm, 0, MEMORY_COMM_LEN);
		memcpy(comm, p->exe, strnlen(p->exe, MEMORY_COMM_LEN - 1));
		return;
	}
	if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	*t = (struct thread_name){ .pid = p->pid, .tid = tid, .read_ns = now };
	memcpy(t->comm, comm, MEMORY_COMM_LEN);
}

static void preload_record(void *arg, const struct autoprof_preload_rec *r, const void *stack)
{
	struct drain *d = arg;
	struct memory *m = d->m;
	struct memory_alloc_event *e = &m->pev;
	bool truncated = false;

	if (r->type == AUTOPROF_REC_FREE) {
		m->preload_frees++;
		live__forget(m, d->p->pid, r->ptr);
		return;
	}
	m->preload_allocs++;
	*e = (struct memory_alloc_event){ .type = MEMORY_EV_ALLOC,
					  .pid = d->p->pid,
					  .ptr = r->ptr,
					  .size = r->size,
					  .time_ns = r->time_ns,
					  .mean = r->mean ? r->mean : 1,
					  .tid = r->tid,
					  .flags = MEMORY_F_PRELOAD };
	thread_comm(m, d->p, r->tid, e->comm);
	e->nr_ustack = preload_walk(d, r, stack, (uint64_t *)e->stack, &truncated);
	if (truncated)
		e->flags |= MEMORY_F_USTACK_TRUNCATED;
	ingest_alloc(m, e, sizeof(*e));
}

/* On the ingest thread, which alone adds and removes processes: no lock to walk them. */
static void preload_drain(struct memory *m, struct mproc *p)
{
	struct drain d = { .m = m, .p = p };

	if (p->attached && p->pring)
		preload_ring__drain(p->pring, preload_record, &d);
}

static int handle_event(void *arg, void *data, size_t size)
{
	struct memory *m = arg;
	const struct memory_free_event *f = data;

	if (size < sizeof(*f)) {
		m->drop_malformed++;
		return 0;
	}
	if (f->type == MEMORY_EV_ALLOC) {
		ingest_alloc(m, data, size);
		return 0;
	}
	if (f->type == MEMORY_EV_FLUSH) {
		struct mproc *p = *mproc__find(m, f->pid);

		if (p)
			preload_drain(m, p);
		return 0;
	}
	live__forget(m, f->pid, f->ptr);
	return 0;
}

/* ---- heap queries --------------------------------------------------------------------------- */

static bool pid_wanted(const struct store_filter *f, uint32_t pid)
{
	if (!f || !f->nr_pids)
		return true;
	for (size_t i = 0; i < f->nr_pids; i++)
		if (f->pids[i] == pid)
			return true;
	return false;
}

static int live__cmp(const void *a, const void *b)
{
	const struct live *x = *(const struct live *const *)a, *y = *(const struct live *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->nr_frames != y->nr_frames)
		return x->nr_frames < y->nr_frames ? -1 : 1;
	return memcmp(x->frames, y->frames, x->nr_frames * sizeof(*x->frames));
}

int memory__live_rows(struct memory *m, const struct store_filter *filter,
		      struct store_row **rows_out, size_t *nr_out)
{
	struct store_row *rows = NULL;
	struct live **all = NULL;
	size_t n = 0, nr = 0;
	int err = 0;

	*rows_out = NULL;
	*nr_out = 0;
	pthread_mutex_lock(&m->lock);
	all = malloc((m->nr_live ? m->nr_live : 1) * sizeof(*all));
	if (!all) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < m->nr_buckets; i++)
		for (struct live *l = m->buckets[i]; l; l = l->next)
			if (pid_wanted(filter, l->pid))
				all[n++] = l;
	qsort(all, n, sizeof(*all), live__cmp);
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct live *l = all[i];
		struct store_row *r;
		struct frame *frames;
		struct mproc *p;

		if (nr && !live__cmp(&all[i - 1], &all[i])) {
			rows[nr - 1].values[2] += l->objects;
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
		p = *mproc__find(m, l->pid);
		r = &rows[nr++];
		*r = (struct store_row){
			.frames = frames,
			.nr_frames = l->nr_frames,
			.pid = l->pid,
			.tid = l->tid,
			.comm = strdup(l->comm),
			.exe = strdup(p ? p->exe : ""),
			.values = { 0, 0, l->objects, l->bytes },
			.exe_path = "",
			.container_id = "",
			.service = "",
		};
	}
out:
	pthread_mutex_unlock(&m->lock);
	free(all);
	if (err) {
		memory_rows__free(rows, nr);
		return err;
	}
	*rows_out = rows;
	*nr_out = nr;
	return 0;
}

void memory_rows__free(struct store_row *rows, size_t nr)
{
	for (size_t i = 0; rows && i < nr; i++) {
		for (uint32_t k = 0; k < rows[i].nr_frames; k++)
			dso__put(rows[i].frames[k].dso);
		free((void *)rows[i].frames);
		free((void *)rows[i].comm);
		free((void *)rows[i].exe);
	}
	free(rows);
}

uint64_t memory__mean_interval(const struct memory *m)
{
	return m->mean;
}

/* ---- life cycle ----------------------------------------------------------------------------- */

/* "a,b,cgroup:/dir" from the config: one target per entry (config.c checked them). */
static int add_config_targets(struct memory *m, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		struct memtarget_spec spec;
		char why[256];
		uint32_t id;

		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		err = memtarget__parse_config(tok, &spec, why, sizeof(why));
		if (err) {
			pr_err("memory.targets: %s\n", why);
			break;
		}
		err = memory__add_target(m, &spec, &id);
	}
	free(copy);
	return err;
}

struct memory *memory__new(const struct memory_opts *opts, struct collect_ctx *ctx, int *err)
{
	struct memory *m = calloc(1, sizeof(*m));
	uint32_t *table;

	if (!m) {
		*err = -ENOMEM;
		return NULL;
	}
	m->ctx = ctx;
	m->mean = opts->mean_interval ? opts->mean_interval : 1;
	m->ringbuf_size = opts->ringbuf_size;
	pthread_mutex_init(&m->lock, NULL);
	m->ingest = ingest__new(ctx);
	if (!m->ingest) {
		*err = -ENOMEM;
		goto out_free;
	}
	m->skel = memory_bpf__open();
	if (!m->skel) {
		*err = -errno;
		pr_err("cannot open BPF object: %s\n", strerror(-*err));
		goto out_free;
	}
	m->skel->rodata->mean_interval = m->mean;
	m->skel->rodata->unwind_tables = ctx->unwinder != NULL;
	table = (uint32_t *)m->skel->rodata->exp_table;
	memsample__exp_table(table, MEMORY_EXP_TABLE, MEMORY_EXP_SHIFT);
	*err = collect__share_maps(ctx, m->skel->obj);
	if (!*err)
		*err = bpf_map__set_max_entries(m->skel->maps.memory_events, opts->ringbuf_size) ?:
		       bpf_map__set_max_entries(m->skel->maps.memory_live, opts->max_live);
	if (*err)
		goto out_destroy;
	*err = memory_bpf__load(m->skel);
	if (*err) {
		pr_err("cannot load BPF program: %s\n", strerror(-*err));
		goto out_destroy;
	}
	*err = collect__add_ring(ctx, bpf_map__fd(m->skel->maps.memory_events), handle_event, m,
				 &m->ring);
	if (*err)
		goto out_destroy;
	store__set_period(ctx->store, PROFILE_ALLOCS, m->mean);
	store__set_period(ctx->store, PROFILE_HEAP, m->mean);
	*err = add_config_targets(m, opts->targets ? opts->targets : "");
	if (*err)
		goto out_destroy;
	return m;

out_destroy:
	memory__free(m);
	return NULL;
out_free:
	ingest__free(m->ingest);
	free(m);
	return NULL;
}

void memory__free(struct memory *m)
{
	if (!m)
		return;
	while (m->procs)
		mproc__remove(m, &m->procs);
	for (uint32_t i = 0; i < m->nr_buckets; i++)
		while (m->buckets[i])
			live__remove(m, &m->buckets[i]);
	free(m->buckets);
	free(m->targets);
	memory_bpf__destroy(m->skel);
	ingest__free(m->ingest);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void memory__stats(struct memory *m, struct memory_stats *out)
{
	memset(out, 0, sizeof(*out));
	counters__read(bpf_map__fd(m->skel->maps.memory_counters), out->bpf,
			       MEMORY_CNT__MAX);
	pthread_mutex_lock(&m->lock);
	for (uint32_t i = 0; i < m->nr_targets; i++)
		out->targets += !m->targets[i].removed;
	out->preload = m->preload_gone;
	for (struct mproc *p = m->procs; p; p = p->next) {
		if (p->pring)
			preload_ring__add_stats(p->pring, &out->preload);
		out->procs_attached += p->attached;
		out->procs_preload += p->attached && p->mode == MEMSITES_PRELOAD;
		out->procs_go += p->attached && p->mode == MEMSITES_GO;
		out->procs_pending += !p->attached;
	}
	out->live = m->nr_live;
	out->live_bytes = m->live_bytes;
	out->ingested = m->ingested;
	out->drop_store = m->drop_store;
	out->drop_malformed = m->drop_malformed;
	out->attach_ok = m->attach_ok;
	out->attach_failed = m->attach_failed;
	out->probes_emulated = m->probes_emulated;
	out->probes_entry = m->probes_entry;
	/* What the rings carried counts as what the markers' probes counted before them. */
	out->bpf[MEMORY_CNT_SAMPLED] += m->preload_allocs;
	out->bpf[MEMORY_CNT_FREES] += m->preload_frees;
	out->bpf[MEMORY_CNT_FREES_SAMPLED] += m->preload_frees;
	pthread_mutex_unlock(&m->lock);
}
