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
#include "memory/memsites.h"
#include "memory/preload.h"
#include "sample/ingest.h"
#include "store/liveset.h"
#include "store/store.h"
#include "symbolize/dso.h"
#include "symbolize/symbolizer.h"
#include "proc/proctab.h"
#include "unwind/unwind.h"
#include "bpf/memory.skel.h"
#include "memory/memory.h"
#include "memory/memory_priv.h"

/* How a process is profiled (enum memsites_mode): its allocator probed, the preload shim's
 * ring, or Go's own sampled path. Also the "mode" the API shows. */
static const char *const mode_names[] = {
	[MEMSITES_ATTACH] = "attach",
	[MEMSITES_PRELOAD] = "preload",
	[MEMSITES_GO] = "go",
	[MEMSITES_JAVA] = "java",
};
#include "memory/memsample.h"

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

struct mproc **mproc__find(struct memory *m, uint32_t pid)
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

/* A memory target: its allocators are probed from its exec on. */
static bool claims_cb(void *ctx, uint32_t pid)
{
	struct memory *m = ctx;
	bool target;

	pthread_mutex_lock(&m->lock);
	target = *mproc__find(m, pid) != NULL;
	pthread_mutex_unlock(&m->lock);
	return target;
}

int memory__observe(struct memory *m, struct proctab *pt)
{
	return proctab__observe(pt, &(struct proc_observer){
					    .name = "memory",
					    .exec = exec_cb,
					    .exit = exit_cb,
					    .claims = claims_cb,
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
 * The class of a Java sample (its Klass, e->ptr) as a frame into *f, named from the JVM's
 * memory once per class. Under m->lock. 0 or a negative errno (not named: counted).
 */
static int java_class(struct memory *m, struct mproc *p, uint64_t klass, struct frame *f)
{
	struct java_class *c = &p->classes[(klass >> 3) % JAVA_CLASSES];
	char name[256];
	int err;

	/* (0 is no key: an empty entry holds it. BPF sends none.) */
	if (!klass)
		return -EINVAL;
	if (c->klass == klass) {
		*f = c->frame;
		return 0;
	}
	err = hotspot__klass_name(p->mem_fd, &p->hs, klass, name, sizeof(name));
	if (!err)
		err = symbolizer__runtime_frame(m->ctx->sym, DSO_JAVA, name, "", 0, f);
	if (err) {
		m->java_class_unnamed++;
		return err;
	}
	/* A class unloaded and another loaded at its address keeps the first name: classes
	 * of the application are seldom unloaded, and never while they allocate. */
	*c = (struct java_class){ klass, *f };
	return 0;
}

/*
 * How many leading frames of a sample are not the program's: a Go sample's runtime frames
 * (mProf_Malloc, mallocgc, newobject...), a Java sample's in libjvm.so (AllocTracer,
 * MemAllocator, the runtime entry of the code that allocated), another's wrappers of malloc
 * (C++ operator new, Rust's __rust_alloc...), by address. The sample belongs to the first frame
 * after them, the Go or Java function that allocated or the caller of new; a stack of them alone
 * (the runtime's own allocations) is kept whole. *mean: a Go process's MemProfileRate. *leaf: a
 * Java sample's class, the frame before all (leaf->dso NULL: none).
 */
static uint32_t lead_frames(struct memory *m, const struct memory_alloc_event *e, uint64_t *mean,
			    struct frame *leaf)
{
	struct mproc *p;
	uint32_t n = 0;

	leaf->dso = NULL;
	pthread_mutex_lock(&m->lock);
	p = *mproc__find(m, e->pid);
	if (p && p->mode == MEMSITES_JAVA && (e->flags & MEMORY_F_JAVA)) {
		while (n < e->nr_ustack && in_ranges(p->rt, p->nr_rt, e->stack[n]))
			n++;
		if (n == e->nr_ustack)
			n = 0;
		if (java_class(m, p, e->ptr, leaf))
			leaf->dso = NULL;
	} else if (p && p->mode == MEMSITES_GO) {
		int64_t rate = 0;

		while (n < e->nr_ustack && in_ranges(p->rt, p->nr_rt, e->stack[n]))
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
	struct mproc *p_tracked;
	char exe[sizeof(p_tracked->exe)] = "";
	uint64_t mean = e->mean;
	struct frame leaf;
	uint32_t skip = 0;

	if (nu > MEMORY_MAX_USTACK || np > MEMORY_MAX_PYTHON ||
	    size < offsetof(struct memory_alloc_event, stack) + (nu + 2 * np) * sizeof(__u64)) {
		m->drop_malformed++;
		return;
	}
	skip = lead_frames(m, e, &mean, &leaf);
	/* Every entry is a return address, the first too (the allocating call's). Its time too:
	 * an exec of the process still waiting in the process ring is applied first (its detach
	 * of the old image must not take this allocation's image for it). */
	raw = (struct ingest_raw){
		.pid = e->pid,
		.time_ns = e->time_ns,
		.ustack = &e->stack[skip],
		.nr_ustack = nu - skip,
		.utruncated = !!(e->flags & MEMORY_F_USTACK_TRUNCATED),
		.python = np ? &e->stack[nu] : NULL,
		.nr_python = np,
		.leaf = leaf.dso ? &leaf : NULL,
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
	/* Java: the bytes of a TLAB's worth of objects of this one's size. */
	if ((e->flags & MEMORY_F_JAVA) && e->unit)
		objects = (bytes + e->unit / 2) / e->unit;
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
	if (e->flags & (MEMORY_F_UNTRACKED | MEMORY_F_JAVA))
		return;

	pthread_mutex_lock(&m->lock);
	/* A sample drained after its process was detached (exec, exit, target removed): its
	 * live set is gone, and this would stay in it for good. */
	p_tracked = *mproc__find(m, e->pid);
	if (p_tracked && p_tracked->attached)
		snprintf(exe, sizeof(exe), "%s", p_tracked->exe);
	pthread_mutex_unlock(&m->lock);
	if (!p_tracked || !exe[0])
		return;
	/* The BPF table bounds it already: a full one sent it MEMORY_F_UNTRACKED. */
	liveset__add(m->live, &(struct live_alloc){
				      .pid = e->pid,
				      .tid = e->tid,
				      .ptr = e->ptr,
				      .objects = objects,
				      .bytes = bytes,
				      .comm = comm,
				      .exe = exe,
				      .frames = st.frames,
				      .nr_frames = nu,
			      });
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
		liveset__remove(m->live, d->p->pid, 0, r->ptr);
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
void preload_drain(struct memory *m, struct mproc *p)
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
	liveset__remove(m->live, f->pid, 0, f->ptr);
	return 0;
}

/* ---- heap queries ------------------------------------------------------------------------- */

int memory__live_rows(struct memory *m, const struct store_filter *filter,
		      struct store_row **rows, size_t *nr)
{
	return liveset__rows(m->live, filter, rows, nr);
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
	m->live = liveset__new(0);
	if (!m->ingest || !m->live) {
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
	liveset__free(m->live);
	free(m);
	return NULL;
}

void memory__free(struct memory *m)
{
	if (!m)
		return;
	while (m->procs)
		mproc__remove(m, &m->procs);
	liveset__free(m->live);
	free(m->targets);
	memory_bpf__destroy(m->skel);
	ingest__free(m->ingest);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void memory__stats(struct memory *m, struct memory_stats *out)
{
	uint64_t live, live_bytes;

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
		out->procs_java += p->attached && p->mode == MEMSITES_JAVA;
		out->procs_pending += !p->attached;
	}
	liveset__count(m->live, &live, &live_bytes);
	out->live = live;
	out->live_bytes = live_bytes;
	out->ingested = m->ingested;
	out->drop_store = m->drop_store;
	out->drop_malformed = m->drop_malformed;
	out->attach_ok = m->attach_ok;
	out->attach_failed = m->attach_failed;
	out->probes_emulated = m->probes_emulated;
	out->probes_entry = m->probes_entry;
	out->jvm_unprobed = m->jvm_unprobed;
	out->java_class_unnamed = m->java_class_unnamed;
	/* What the rings carried counts as what the markers' probes counted before them. */
	out->bpf[MEMORY_CNT_SAMPLED] += m->preload_allocs;
	out->bpf[MEMORY_CNT_FREES] += m->preload_frees;
	out->bpf[MEMORY_CNT_FREES_SAMPLED] += m->preload_frees;
	pthread_mutex_unlock(&m->lock);
}
