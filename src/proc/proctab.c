// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "proctab: " fmt

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/sysmacros.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/log.h"
#include "symbolize/dso.h"
#include "lib/procmaps.h"
#include "lib/timeconst.h"
#include "proc/container.h"
#include "proc/procctx.h"
#include "proc/proctab.h"
#include "symbolize/symbolizer.h"

#define BUCKETS 4096
/* A process that keeps missing (JIT, dlopen storms) re-reads its maps at most this often. */
#define REREAD_INTERVAL_NS NSEC_PER_SEC
#define FAST_REREADS 8
/* Where user code can be on x86-64: above vm.mmap_min_addr's default, below the 47-bit top. */
#define USER_MIN 0x10000ULL
#define USER_MAX 0x800000000000ULL
/* A quiet process still sampled this long after its exec is learned all the same: what only
 * a read gives (a service name in its environment, a process context, its observers) then
 * reaches its samples; churn's processes are gone long before. */
#define QUIET_LEARN_AFTER_NS NSEC_PER_SEC
/* Environments past this are rare; the variable is then looked for in what was read. */
#define ENV_CAP (128 * 1024)

struct proc {
	struct proc *next;
	uint32_t pid;
	bool kthread;
	bool gone;
	char exe[128];
	char *exe_path;	       /* as the process sees it */
	/* A quiet exec's executable, named by its dso's path until exe is set (set_exe): a
	 * reference, not two strings to make at every exec of churn. */
	struct dso *exe_dso;
	char container_id[CONTAINER_ID_LEN + 1]; /* "" outside containers */
	char service[128];     /* OpenTelemetry service.name in effect, or "" */
	char service_env[128]; /* from its environment, read once per image */
	char service_ctx[128]; /* from its process context (OTEL_CTX), or "" */
	uint64_t ctx_addr;     /* where the OTEL_CTX mapping is; 0 if none at the last maps read */
	uint64_t ctx_published_ns; /* publication time of the context in service_ctx */
	struct proc_map *maps;
	uint32_t nr_maps;
	uint64_t maps_read_ns;
	uint32_t fast_rereads;
	struct dso *jit; /* this process's anonymous executable memory, made on first sight */
	bool jvm;	 /* maps HotSpot's libjvm.so: its JIT frames go through the JVM hook */
	uint32_t maps_gen; /* bumped at every successful read of the maps */
	bool new_image;	   /* its maps are being read for an exec */
	bool unlearned;	   /* exec'd quietly, its maps not read since */
	uint64_t exec_ns;  /* when its exec was seen; 0: found running */
	struct proc_exe_id exe_id; /* its executable as of its exec; ino 0: not known */
};

struct proctab {
	struct symbolizer *sym;
	struct proc_observer observers[PROCTAB_MAX_OBSERVERS];
	uint32_t nr_observers;
	struct proc *buckets[BUCKETS];
	struct proctab_stats stats;
	char *env; /* ENV_CAP bytes, reused by every environment read */
	struct container_ids *containers; /* NULL when out of memory: every exec reads */
	void (*gone)(void *ctx); /* proctab__on_gone */
	void *gone_ctx;
};

struct proctab *proctab__new(struct symbolizer *sym)
{
	struct proctab *pt = calloc(1, sizeof(*pt));

	if (pt) {
		pt->sym = sym;
		pt->containers = container_ids__new();
	}
	return pt;
}

void proctab__watch_cgroups(struct proctab *pt, const volatile uint64_t *moves,
			    const volatile uint64_t *renames)
{
	if (pt->containers)
		container_ids__watch(pt->containers, moves, renames);
}

void proctab__on_gone(struct proctab *pt, void (*fn)(void *ctx), void *ctx)
{
	pt->gone = fn;
	pt->gone_ctx = ctx;
}

int proctab__observe(struct proctab *pt, const struct proc_observer *o)
{
	if (pt->nr_observers == PROCTAB_MAX_OBSERVERS)
		return -ENOSPC;
	pt->observers[pt->nr_observers++] = *o;
	return 0;
}

bool proc__new_image(const struct proc *p)
{
	return p->new_image;
}

bool proc__exited(const struct proc *p)
{
	return p->gone;
}

bool proc__unlearned(const struct proc *p)
{
	return p->unlearned;
}

bool proc__loading(const struct proc *p, uint64_t now_ns)
{
	return p->exec_ns && now_ns - p->exec_ns < PROC_LOADING_NS;
}

/* Tells the observers that p's maps were (re)read or dropped. */
static void tell(struct proctab *pt, const struct proc *p)
{
	if (p->kthread)
		return;
	for (uint32_t i = 0; i < pt->nr_observers; i++)
		if (pt->observers[i].maps)
			pt->observers[i].maps(pt->observers[i].ctx, p->pid, p->maps, p->nr_maps);
}

static void proc__drop_maps(struct proc *p)
{
	for (uint32_t i = 0; i < p->nr_maps; i++)
		dso__put(p->maps[i].dso);
	free(p->maps);
	p->maps = NULL;
	p->nr_maps = 0;
}

static void proc__free(struct proc *p)
{
	proc__drop_maps(p);
	dso__put(p->jit);
	dso__put(p->exe_dso);
	free(p->exe_path);
	free(p);
}

/* Unlinked already: tell the listener it is gone, and free it. */
static void forget(struct proctab *pt, struct proc *p)
{
	proc__drop_maps(p);
	tell(pt, p);
	proc__free(p);
	pt->stats.processes--;
}

void proctab__free(struct proctab *pt)
{
	if (!pt)
		return;
	for (int i = 0; i < BUCKETS; i++) {
		while (pt->buckets[i]) {
			struct proc *p = pt->buckets[i];

			pt->buckets[i] = p->next;
			proc__free(p);
		}
	}
	free(pt->env);
	container_ids__free(pt->containers);
	free(pt);
}

static struct proc **find(struct proctab *pt, uint32_t pid)
{
	struct proc **pp = &pt->buckets[hash__u64(pid) % BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

struct maps_ctx {
	struct proctab *pt;
	struct proc *p;
	uint32_t cap;
	uint64_t ctx_addr; /* the OTEL_CTX mapping, 0 if none */
	char *exe_path;	   /* the path of the mapping of p's exe_id (owned), NULL if none */
};

static int add_map(const struct map_entry *e, void *arg)
{
	struct maps_ctx *ctx = arg;
	struct proc *p = ctx->p;
	struct dso *dso;

	if (!ctx->exe_path && p->exe_id.ino && e->inode == p->exe_id.ino &&
	    kernel_dev(e->dev_major, e->dev_minor) == p->exe_id.dev)
		ctx->exe_path = strdup(e->path);
	if (!e->executable) {
		/* The process context is read-only data: the one other line worth a look. */
		if (!ctx->ctx_addr && e->readable && procctx__is_mapping(e->path))
			ctx->ctx_addr = e->start;
		return 0;
	}
	if (e->path[0] != '/' && !symbolizer__kernel_page(e->path)) {
		/* Anonymous code: one JIT dso per process, whatever the number of mappings. */
		if (!p->jit)
			p->jit = symbolizer__jit_dso(ctx->pt->sym, p->pid);
		dso = dso__get(p->jit);
	} else {
		const char *base = strrchr(e->path, '/');

		if (base && !strcmp(base, "/libjvm.so"))
			p->jvm = true;
		dso = symbolizer__dso_for_mapping(ctx->pt->sym, p->pid, e);
	}
	if (!dso)
		return 0;
	if (p->nr_maps == ctx->cap) {
		uint32_t cap = ctx->cap ? ctx->cap * 2 : 16;
		struct proc_map *maps = realloc(p->maps, cap * sizeof(*maps));

		if (!maps) {
			dso__put(dso);
			return -ENOMEM;
		}
		p->maps = maps;
		ctx->cap = cap;
	}
	p->maps[p->nr_maps++] = (struct proc_map){ e->start, e->end, e->pgoff, dso,
						   kernel_dev(e->dev_major, e->dev_minor), e->inode };
	return 0;
}

static void set_exe(struct proc *p, const char *path)
{
	const char *base;

	/* Read again for an exec not yet reported: the same image, nothing to change. */
	if (p->exe[0] && p->exe_path && !strcmp(p->exe_path, path))
		return;
	dso__put(p->exe_dso);
	p->exe_dso = NULL;
	base = strrchr(path, '/');
	snprintf(p->exe, sizeof(p->exe), "%.127s", base ? base + 1 : path);
	free(p->exe_path);
	p->exe_path = strdup(path);
}

/* From /proc/PID/exe: for a process not seen at its exec (a readlink costs ~10 us there). */
static void read_exe(struct proc *p, int procfd)
{
	char path[4096];
	ssize_t n;
	char *del;

	n = readlinkat(procfd, "exe", path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = '\0';
	del = strstr(path, " (deleted)");
	if (del && del[10] == '\0')
		*del = '\0';
	set_exe(p, path);
}

/* File name of the process whose /proc/PID is procfd into buf, at most cap - 1 bytes (the rest
 * is not read), NUL-terminated: its length, or -1 when it cannot be opened. */
static ssize_t read_proc_file(int procfd, const char *name, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	int fd;

	fd = openat(procfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Small reads: the kernel hands some files (environ) out a page per read. */
	while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/*
 * The OpenTelemetry service name a process declares in its environment: OTEL_SERVICE_NAME, else
 * service.name in OTEL_RESOURCE_ATTRIBUTES (the SDKs' own precedence).
 */
static void read_service_env(struct proctab *pt, struct proc *p, int procfd)
{
	const char *attrs = NULL;
	ssize_t n;
	char *env;

	p->service_env[0] = '\0';
	/* Kept: a fresh 128 KiB buffer was an mmap and a munmap at every exec. */
	if (!pt->env)
		pt->env = malloc(ENV_CAP);
	env = pt->env;
	if (!env)
		return;
	n = read_proc_file(procfd, "environ", env, ENV_CAP);
	if (n < 0)
		return;
	for (char *v = env; v < env + n; v += strlen(v) + 1) {
		if (!strncmp(v, "OTEL_SERVICE_NAME=", 18) && v[18]) {
			snprintf(p->service_env, sizeof(p->service_env), "%s", v + 18);
			return;
		}
		if (!strncmp(v, "OTEL_RESOURCE_ATTRIBUTES=", 25))
			attrs = v + 25;
	}
	for (const char *a = attrs; a && *a; a = strchr(a, ',') ? strchr(a, ',') + 1 : NULL) {
		if (!strncmp(a, "service.name=", 13)) {
			size_t len = strcspn(a + 13, ",");

			snprintf(p->service_env, sizeof(p->service_env), "%.*s", (int)len, a + 13);
			break;
		}
	}
}

/*
 * service.name from the process context (OTEP 4719), looked at whenever the maps are read: an
 * SDK publishes it at its start, well after exec, and may republish it. Only processes with an
 * OTEL_CTX mapping pay for it, and an unchanged context costs one 32-byte read.
 */
static void read_service_ctx(struct proctab *pt, struct proc *p, uint64_t addr)
{
	void *payload;
	size_t len;
	int err;

	if (addr != p->ctx_addr) {
		p->ctx_addr = addr;
		p->ctx_published_ns = 0;
		p->service_ctx[0] = '\0';
	}
	if (!addr)
		return;
	pt->stats.ctx_reads++;
	err = procctx__read_payload(p->pid, addr, &p->ctx_published_ns, &payload, &len);
	if (err == 1)
		return;
	if (!err) {
		err = procctx__decode_service(payload, len, p->service_ctx, sizeof(p->service_ctx));
		free(payload);
		/* A context that names no service (or cannot be decoded) leaves the environment's. */
		if (err)
			p->service_ctx[0] = '\0';
		if (err == -ENODATA)
			err = 0;
	}
	if (err == -ESRCH) {
		pt->stats.ctx_gone++;
	} else if (err == -EAGAIN) {
		/* An SDK maps the context before it fills it: looked at again at the next maps read. */
		pt->stats.ctx_unpublished++;
	} else if (err) {
		/* Otherwise what we read last stays. */
		pt->stats.ctx_errors++;
		pr_debug("pid %u: cannot read the process context at %#llx: %s\n", p->pid,
			 (unsigned long long)addr, strerror(-err));
	}
}

/*
 * The process context wins over the environment: it is what the process declares about itself
 * at run time (its SDK's configuration, code included), while the environment is what it was
 * started with, and SDKs that publish a context built it from that environment anyway.
 */
static void pick_service(struct proc *p)
{
	snprintf(p->service, sizeof(p->service), "%s",
		 p->service_ctx[0] ? p->service_ctx : p->service_env);
}

int proc_map__open(uint32_t pid, const struct proc_map *m)
{
	const struct map_entry e = { .start = m->start, .end = m->end, .path = dso__path(m->dso) };

	return maps__open_file((int)pid, &e);
}

/*
 * A forked child gone before its maps were read ran its parent's image (sample/proc.c says whose
 * only until it execs): its samples are named by the parent's maps, not left as raw addresses.
 */
static void inherit(struct proctab *pt, struct proc *p, uint64_t now_ns)
{
	struct proc *parent = NULL;
	struct proc_map *maps;
	uint32_t ppid = 0;

	for (uint32_t i = 0; i < pt->nr_observers && !ppid; i++)
		if (pt->observers[i].parent)
			ppid = pt->observers[i].parent(pt->observers[i].ctx, p->pid);
	/* (Learned now if need be: a shell that forks is seldom on a CPU itself.) */
	if (ppid && ppid != p->pid)
		parent = proctab__get(pt, ppid, 0, now_ns);
	if (!parent || parent->kthread || !parent->nr_maps)
		return;
	maps = malloc(parent->nr_maps * sizeof(*maps));
	if (!maps)
		return;
	memcpy(maps, parent->maps, parent->nr_maps * sizeof(*maps));
	for (uint32_t i = 0; i < parent->nr_maps; i++)
		dso__get(maps[i].dso);
	p->maps = maps;
	p->nr_maps = parent->nr_maps;
	p->jvm = parent->jvm;
	memcpy(p->exe, parent->exe, sizeof(p->exe));
	free(p->exe_path);
	p->exe_path = parent->exe_path ? strdup(parent->exe_path) : NULL;
	dso__put(p->exe_dso);
	p->exe_dso = parent->exe_dso ? dso__get(parent->exe_dso) : NULL;
	memcpy(p->container_id, parent->container_id, sizeof(p->container_id));
	memcpy(p->service, parent->service, sizeof(p->service));
	pt->stats.maps_inherited++;
}

/*
 * The process's /proc/PID directory, for files to be read relative to it (O_PATH): a new
 * process's lookup (its dentry and inode made) was most of each open by path. It also pins the
 * process: a pid reused meanwhile is not read as this one. An fd, or -1 with errno set.
 */
static int proc_dir(uint32_t pid)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/%u", pid);
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static void learn(struct proctab *pt, struct proc *p, uint64_t now_ns)
{
	struct proc fresh = { .pid = p->pid, .jit = p->jit, .exe_id = p->exe_id };
	struct maps_ctx ctx = { pt, &fresh, 0, 0, NULL };
	/* A quiet exec's process is named by its executable's dso (or its comm) until learned:
	 * its context is still due. */
	bool named = p->exe[0] && !p->unlearned;
	int procfd, err;

	p->maps_read_ns = now_ns;
	if (p->kthread)
		return;
	pt->stats.maps_reads++;
	/* Looked up once for every file read below. */
	procfd = proc_dir(p->pid);
	if (procfd < 0) {
		err = -errno;
		goto failed;
	}
	/* Also when named: maps read again for pcs they lacked may be those of an exec whose
	 * event waits in another ring behind the samples, and the name then is the new image's
	 * too (the event, when it comes, starts the process over). Seen at its exec, it is named
	 * by its executable's line of the maps. */
	if (!p->exe_id.ino)
		read_exe(p, procfd);
	if (!named) {
		container_ids__get(pt->containers, procfd, p->exe_id.cgroup_key,
				   p->exe_id.cgroup_moves, p->container_id);
		read_service_env(pt, p, procfd);
		pick_service(p);
	}
	/* Every line, not only executable ones: the process context is data. */
	err = maps__for_each_at(procfd, false, add_map, &ctx);
	p->jit = fresh.jit;
	if (p->exe_id.ino) {
		if (ctx.exe_path)
			set_exe(p, ctx.exe_path);
		else if (!err)
			read_exe(p, procfd); /* not mapped as it was at exec: exec'd again since */
		free(ctx.exe_path);
	}
	close(procfd);
	/* Past exit_mm (a zombie, or a process on its way out) its maps read empty: it is gone,
	 * and what was known of it, or its exit's mappings, still name its samples. */
	if (!err && !fresh.nr_maps)
		err = -ESRCH;
failed:
	if (err) {
		/* Keep what we knew: a process that exited is still resolved by its last maps. */
		proc__drop_maps(&fresh);
		if (err == -ENOENT || err == -ESRCH) {
			pt->stats.maps_gone++;
			p->gone = true;
			if (!p->nr_maps && !named && !p->exe_id.ino)
				inherit(pt, p, now_ns);
			/* Its exit's mappings, if they wait, name what the read could not. */
			if (pt->gone)
				pt->gone(pt->gone_ctx);
		} else {
			pt->stats.maps_errors++;
			pr_debug("cannot read maps of pid %u: %s\n", p->pid, strerror(-err));
		}
		return;
	}
	proc__drop_maps(p);
	p->maps = fresh.maps;
	p->nr_maps = fresh.nr_maps;
	p->jvm = fresh.jvm;
	p->maps_gen++;
	if (p->unlearned) {
		p->unlearned = false;
		pt->stats.quiet_learned++;
	}
	read_service_ctx(pt, p, ctx.ctx_addr);
	pick_service(p);
	pr_debug("pid %u (%s): %u executable mappings\n", p->pid, p->exe, p->nr_maps);
	tell(pt, p);
}

static struct proc *insert(struct proctab *pt, struct proc **slot, uint32_t pid, int kthread)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->kthread = kthread;
	if (kthread)
		snprintf(p->exe, sizeof(p->exe), "[kernel]");
	*slot = p;
	pt->stats.processes++;
	return p;
}

/*
 * The container ID of a quiet process its cgroups' key did not find cached (the first process
 * in a container's cgroups): read at its exec's drain, since its samples may never have it
 * learned, and cached by the key for the next processes in them. One gone by then is in none.
 */
static void read_container(struct proctab *pt, struct proc *p)
{
	int procfd = proc_dir(p->pid);

	if (procfd < 0)
		return;
	container_ids__get(pt->containers, procfd, p->exe_id.cgroup_key, p->exe_id.cgroup_moves,
			   p->container_id);
	close(procfd);
}

struct proc *proctab__exec(struct proctab *pt, uint32_t pid, const struct proc_exe_id *exe,
			   bool quiet, uint64_t now_ns)
{
	struct proc **slot = find(pt, pid);
	struct proc *p = *slot;

	if (p) {
		/* A new image: new mappings, new name, new JIT. */
		p->exe[0] = '\0';
		free(p->exe_path);
		p->exe_path = NULL;
		dso__put(p->exe_dso);
		p->exe_dso = NULL;
		proc__drop_maps(p);
		dso__put(p->jit);
		p->jit = NULL;
		p->gone = false;
		p->fast_rereads = 0;
		/* The old image's context went with it. */
		p->ctx_addr = 0;
		p->ctx_published_ns = 0;
		p->service_ctx[0] = '\0';
		tell(pt, p);
	} else {
		p = insert(pt, slot, pid, 0);
	}
	quiet = quiet && p && exe && exe->ino;
	if (p) {
		p->new_image = true;
		p->exec_ns = now_ns;
		p->exe_id = exe ? *exe : (struct proc_exe_id){ 0 };
		p->unlearned = quiet;
		if (quiet) {
			/* Learned when its samples need it, or named by its exit's mappings. Its
			 * name is its executable's, whose dso it is (what made it quiet), else
			 * its comm. */
			p->exe_dso = symbolizer__dso_by_inode(pt->sym, exe->dev >> 20,
							      exe->dev & 0xfffff, exe->ino);
			if (!p->exe_dso)
				snprintf(p->exe, sizeof(p->exe), "%.15s", exe->comm);
			if (!container_ids__get(pt->containers, -1, exe->cgroup_key,
						exe->cgroup_moves, p->container_id))
				read_container(pt, p);
			p->maps_read_ns = now_ns;
			pt->stats.quiet_execs++;
		} else {
			learn(pt, p, now_ns);
		}
		p->new_image = false;
	}
	for (uint32_t i = 0; i < pt->nr_observers; i++)
		if (pt->observers[i].exec)
			pt->observers[i].exec(pt->observers[i].ctx, pid, quiet ? NULL : p);
	return p;
}

/* p's mapping of the file dev:ino (the kernel's encoding), or NULL. */
static const struct proc_map *maps_file(const struct proc *p, uint32_t dev, uint64_t ino)
{
	for (uint32_t i = 0; i < p->nr_maps; i++)
		if (p->maps[i].ino == ino && p->maps[i].dev == dev)
			return &p->maps[i];
	return NULL;
}

/*
 * Whether p's executable is the very file its dso was read from: a copy elsewhere (another
 * path, a container's) shares the dso of the first one by build ID, and the unwind table its
 * exec publishes is found by the first one's inode alone (unwind/unwind.c): walked from
 * there, a quiet copy's stacks would end at its first frame.
 */
static bool exe_is_dso_file(const struct proc *p)
{
	const struct proc_map *m = maps_file(p, p->exe_id.dev, p->exe_id.ino);
	struct dso_file_key key;

	return m && !dso__file_key(m->dso, &key) && key.ino == p->exe_id.ino &&
	       kernel_dev(major(key.dev), minor(key.dev)) == p->exe_id.dev;
}

static int by_start(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The mappings its exit reported that p's maps lack (a quiet process never learned: all of
 * them; one learned before the loader was done: the libraries), of files known already, added
 * in place of what they overlap: its samples still in the rings are named by them.
 */
static uint32_t add_exit_maps(struct proctab *pt, struct proc *p, const struct proc_exit_map *maps,
			      uint32_t n)
{
	struct proc_map *out = malloc((p->nr_maps + n) * sizeof(*out) + 1);
	uint32_t k = 0, added = 0, unknown = 0;

	if (!out)
		return 0;
	for (uint32_t i = 0; i < p->nr_maps; i++) {
		bool hidden = false;

		for (uint32_t j = 0; j < n && !hidden; j++)
			hidden = !maps_file(p, maps[j].dev, maps[j].ino) &&
				 p->maps[i].start < maps[j].end && maps[j].start < p->maps[i].end;
		if (hidden)
			dso__put(p->maps[i].dso);
		else
			out[k++] = p->maps[i];
	}
	for (uint32_t j = 0; j < n; j++) {
		struct dso *dso;

		if (maps_file(p, maps[j].dev, maps[j].ino))
			continue;
		dso = symbolizer__dso_by_inode(pt->sym, maps[j].dev >> 20, maps[j].dev & 0xfffff,
					       maps[j].ino);
		if (!dso) {
			unknown++;
			continue;
		}
		if (maps[j].ino == p->exe_id.ino && maps[j].dev == p->exe_id.dev &&
		    dso != p->exe_dso)
			set_exe(p, dso__path(dso));
		out[k++] = (struct proc_map){ maps[j].start, maps[j].end, maps[j].pgoff, dso,
					      maps[j].dev, maps[j].ino };
		added++;
	}
	qsort(out, k, sizeof(*out), by_start);
	free(p->maps);
	p->maps = out;
	p->nr_maps = k;
	if (added) {
		p->maps_gen++;
		pt->stats.named_at_exit++;
	}
	return unknown;
}

int proctab__exit_maps(struct proctab *pt, uint32_t pid, const struct proc_exit_map *maps,
		       uint32_t n, bool truncated, struct proc_exe_id *exe)
{
	struct proc *p = *find(pt, pid);
	uint32_t unknown = 0;
	bool missing = false;

	if (!p || p->kthread || !p->exe_id.ino)
		return -1;
	*exe = p->exe_id;
	/* A file it mapped after its maps were last read (all of them, never learned): its
	 * samples still in the rings are named by its exit's mappings. */
	for (uint32_t i = 0; i < n; i++)
		missing |= !maps_file(p, maps[i].dev, maps[i].ino);
	if (missing)
		unknown = add_exit_maps(pt, p, maps, n);
	/* Never learned, it may have mapped what none of its executable's processes did before
	 * (LD_PRELOAD, a dlopen): a file never read has no table for BPF to walk it by, nor a
	 * dso to name it, and no later process of it would be learned for its sake. */
	if (p->unlearned)
		return unknown || truncated ? 0 : -1;
	/* What it did at run time: read by the maps and the environment when it was learned. */
	if (truncated || p->jvm || p->jit || p->ctx_addr || p->service_env[0])
		return 0;
	for (uint32_t i = 0; i < pt->nr_observers; i++)
		if (pt->observers[i].claims && pt->observers[i].claims(pt->observers[i].ctx, pid))
			return 0;
	/* Files never looked at while it ran: no verdict. */
	if (missing)
		return -1;
	return exe_is_dso_file(p);
}

void proctab__refresh(struct proctab *pt, uint32_t pid, uint64_t now_ns)
{
	struct proc *p = *find(pt, pid);

	if (p) {
		if (!p->gone)
			learn(pt, p, now_ns);
	} else {
		proctab__get(pt, pid, 0, now_ns);
	}
}

void proctab__exiting(struct proctab *pt, uint32_t pid)
{
	struct proc *p = *find(pt, pid);

	if (p)
		p->gone = true;
}

void proctab__exit(struct proctab *pt, uint32_t pid)
{
	struct proc **slot = find(pt, pid);
	struct proc *p = *slot;

	if (p) {
		*slot = p->next;
		forget(pt, p);
	}
	for (uint32_t i = 0; i < pt->nr_observers; i++)
		if (pt->observers[i].exit)
			pt->observers[i].exit(pt->observers[i].ctx, pid);
}

void proctab__sweep(struct proctab *pt)
{
	for (int i = 0; i < BUCKETS; i++) {
		struct proc **pp = &pt->buckets[i];

		while (*pp) {
			struct proc *p = *pp;

			if (!p->kthread && kill((pid_t)p->pid, 0) && errno == ESRCH) {
				*pp = p->next;
				forget(pt, p);
				continue;
			}
			pp = &p->next;
		}
	}
}

uint32_t proctab__scan(struct proctab *pt, uint64_t now_ns)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	uint32_t n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		char link[64], target[16];
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		/* Kernel threads (and zombies) have no executable: nothing to learn. */
		snprintf(link, sizeof(link), "/proc/%lu/exe", pid);
		if (readlink(link, target, sizeof(target)) < 0)
			continue;
		if (proctab__get(pt, (uint32_t)pid, 0, now_ns))
			n++;
	}
	closedir(dir);
	return n;
}

static struct proc *get(struct proctab *pt, uint32_t pid, int kthread, bool described,
			uint64_t now_ns)
{
	struct proc **slot = find(pt, pid);
	struct proc *p = *slot;

	if (p) {
		if (p->unlearned && !p->gone) {
			/* Named by its executable and its cgroups at exec, it needs its maps only
			 * for frames that came as addresses, and what a read alone gives only
			 * once it lives long enough to matter. */
			if (described && now_ns - p->exec_ns < QUIET_LEARN_AFTER_NS)
				pt->stats.quiet_described++;
			else
				learn(pt, p, now_ns);
		}
		return p;
	}
	p = insert(pt, slot, pid, kthread);
	if (p)
		learn(pt, p, now_ns);
	return p;
}

struct proc *proctab__get(struct proctab *pt, uint32_t pid, int kthread, uint64_t now_ns)
{
	return get(pt, pid, kthread, false, now_ns);
}

struct proc *proctab__get_sample(struct proctab *pt, uint32_t pid, int kthread, bool described,
				 uint64_t now_ns)
{
	return get(pt, pid, kthread, described, now_ns);
}

const char *proc__exe(const struct proc *p)
{
	const char *path, *base;

	if (p->exe[0] || !p->exe_dso)
		return p->exe;
	path = dso__path(p->exe_dso);
	base = strrchr(path, '/');
	return base ? base + 1 : path;
}

uint32_t proc__maps_generation(const struct proc *p)
{
	return p->maps_gen;
}

struct proc *proctab__find(struct proctab *pt, uint32_t pid)
{
	return *find(pt, pid);
}

const struct proc_map *proc__maps(const struct proc *p, uint32_t *n)
{
	*n = p->nr_maps;
	return p->maps;
}

const char *proc__exe_path(const struct proc *p)
{
	if (p->exe_path)
		return p->exe_path;
	return p->exe_dso ? dso__path(p->exe_dso) : "";
}

const char *proc__container_id(const struct proc *p)
{
	return p->container_id;
}

const char *proc__service(const struct proc *p)
{
	return p->service;
}

static const struct proc_map *lookup_map(const struct proc *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nr_maps;

	/* /proc/PID/maps lists mappings in address order. */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct proc_map *m = &p->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

struct proc *proctab__image_at(struct proctab *pt, struct proc *p, uint64_t sample_ns,
			       uint64_t now_ns)
{
	struct proc *parent;

	if (!p || !sample_ns || !p->exe_id.forked_from || sample_ns >= p->exe_id.exec_ns ||
	    p->exe_id.forked_from == p->pid)
		return p;
	/* (A shell that forks a command is seldom on a CPU itself: learned now if need be.) */
	parent = proctab__get(pt, p->exe_id.forked_from, 0, now_ns);
	if (!parent || parent->kthread || !parent->nr_maps)
		return p;
	pt->stats.stacks_before_exec++;
	return parent;
}

uint32_t proctab__user_frames(struct proctab *pt, struct proc *p, const uint64_t *addrs,
			      uint32_t n, struct frame *out, uint64_t now_ns, bool *cut)
{
	bool jit = false;
	struct dso *unknown = symbolizer__unknown_dso(pt->sym);
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!(addrs[i] & (PROC_NOT_ADDRESS | PROC_JAVA_METHOD)) && !lookup_map(p, addrs[i]))
			break;
	/* Something was mapped since we looked (dlopen, a library loaded after exec). */
	if (i < n && !p->gone &&
	    (now_ns - p->maps_read_ns >= REREAD_INTERVAL_NS || p->fast_rereads < FAST_REREADS)) {
		/* Right after exec only the executable and the loader are mapped: the libraries
		 * come milliseconds later, so the first misses re-read at once. */
		p->fast_rereads++;
		learn(pt, p, now_ns);
	}
	for (i = 0; i < n; i++) {
		const struct proc_map *m = lookup_map(p, addrs[i]);

		if (addrs[i] & PROC_NOT_ADDRESS) {
			out[i] = (struct frame){ unknown, addrs[i] };
		} else if (addrs[i] & PROC_JAVA_METHOD) {
			out[i] = (struct frame){ p->jit ? p->jit : unknown, addrs[i] };
		} else if (!m) {
			pt->stats.frames_unmapped++;
			/* A JIT makes code executable all the time (V8 does after start-up): in a
			 * process with JIT code, a plausible user address is most likely such code,
			 * which its perf map may name. */
			out[i] = (struct frame){ p->jit && addrs[i] >= USER_MIN && addrs[i] < USER_MAX ?
							 p->jit :
							 unknown,
						 addrs[i] };
		} else if (dso__kind(m->dso) == DSO_ELF || dso__kind(m->dso) == DSO_VDSO) {
			out[i] = (struct frame){ m->dso, addrs[i] - m->start + m->pgoff };
		} else {
			out[i] = (struct frame){ m->dso, addrs[i] };
		}
		jit |= out[i].dso == p->jit;
	}
	*cut = false;
	if (jit && p->jvm && p->jit) {
		for (uint32_t i = 0; i < pt->nr_observers; i++) {
			const struct proc_observer *o = &pt->observers[i];

			if (o->jit_frames) {
				n = o->jit_frames(o->ctx, p->pid, p->jit, out, n, cut, now_ns);
				break;
			}
		}
	}
	return n;
}

void proctab__stats(struct proctab *pt, struct proctab_stats *out)
{
	*out = pt->stats;
}

void proctab__container_stats(struct proctab *pt, struct container_stats *out)
{
	container_ids__stats(pt->containers, out);
}
