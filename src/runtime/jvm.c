// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "jvm: " fmt

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/log.h"
#include "lib/procfs.h"
#include "lib/procmaps.h"
#include "lib/procmem.h"
#include "lib/timeconst.h"
#include "lib/ufile.h"
#include "symbolize/frame.h"
#include "symbolize/dso.h"
#include "symbolize/perfmap.h"
#include "symbolize/symbolizer.h"
#include "proc/proctab.h"
#include "runtime/jvm.h"
#include "runtime/jvmattach.h"
#include "runtime/hotspot.h"
#include "unwind/unwind.h"

#define BUCKETS 256
/* The first request at once, then at most one per interval, doubling up to the cap: code a
 * warming JVM compiled since the last map is named soon; a steady JVM costs nothing. */
#define MIN_INTERVAL_NS (1 * NSEC_PER_SEC)
#define MAX_INTERVAL_NS (10 * NSEC_PER_SEC)
/* Compiler.perfmap of a big code cache takes a while; a stuck JVM must not hold the thread. */
#define ATTACH_TIMEOUT_MS 10000
#define JITS_MAX	  4
/* Failed requests in a row after which a JVM is left alone (about 25 s with the intervals). */
#define MAX_FAILURES 5
/* Interpreted methods named, by their Method: direct-mapped per JVM. */
#define METHODS 512

enum jvm_fp { FP_UNKNOWN, FP_YES, FP_NO };

/* One JVM. The ingest thread creates it and reads it under jvm.lock; the attach thread alone
 * does the slow work and frees it (jobs run in order, its exit job last). */
struct jvm_proc {
	struct jvm_proc *next;
	uint32_t pid;
	/* References to the JIT dsos of its samples, to hand the last map to: more than one when
	 * its exec event was drained after its first samples (the rings are drained in no
	 * particular order), which made the proctab start a new one. The last is current. */
	struct dso *jits[JITS_MAX];
	uint32_t nr_jits;
	bool busy;	   /* a request is queued or running */
	bool ours;	   /* the map in its /tmp exists because we asked */
	bool given_up;	   /* it cannot be attached to: no more requests (nor signals) */
	uint32_t failures; /* requests failed in a row */
	enum jvm_fp fp;
	uint64_t next_ns; /* no request before */
	uint64_t interval_ns;
	struct perf_map *pm; /* the map as last written at our request */
	/* Attach thread only. */
	int tmp_fd;	    /* its /tmp (O_PATH), usable after it exited */
	uid_t uid;	    /* its euid: the owner its perf map must have (or root) */
	char map_name[32];  /* perf-NSPID.map */
	char sock_name[32]; /* .java_pidNSPID, its attach socket */
	bool our_listener;  /* there was no socket before our first request */
	/* Its interpreted frames (UNWIND_FRAME_JAVA): its memory and structures, read by the
	 * attach thread (once the interpreter is there), then by the ingest thread under the
	 * lock; the methods named so far. */
	int mem_fd;
	bool structs_read, interp_known, interp_busy, interp_given_up;
	uint64_t interp_next_ns; /* no look for it before */
	struct hotspot_offsets hs;
	struct jvm_method {
		uint64_t method;
		struct frame frame;
	} *methods;
};

enum jvm_job_kind {
	JOB_MAP,    /* ask for a perf map */
	JOB_INTERP, /* find the interpreter (learn_interpreter) */
	JOB_EXIT,   /* the JVM is gone */
};

struct jvm_job {
	struct jvm_job *next;
	struct jvm_proc *jp;
	enum jvm_job_kind kind;
};

struct jvm {
	struct symbolizer *sym;
	struct unwinder *unwinder; /* told where each JVM's interpreter is; NULL: not */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool stopping;
	struct jvm_job *head, **tail;
	struct jvm_proc *buckets[BUCKETS];
	struct jvm_stats stats;
};

static struct jvm_proc **find(struct jvm *j, uint32_t pid)
{
	struct jvm_proc **pp = &j->buckets[hash__u64(pid) % BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* Under j->lock. */
static int queue(struct jvm *j, struct jvm_proc *jp, enum jvm_job_kind kind)
{
	struct jvm_job *job = calloc(1, sizeof(*job));

	if (!job)
		return -ENOMEM;
	job->jp = jp;
	job->kind = kind;
	*j->tail = job;
	j->tail = &job->next;
	pthread_cond_signal(&j->cond);
	return 0;
}

/*
 * Under j->lock: an interpreted frame's method (its word: PROC_JAVA_METHOD | Method*) as a
 * [java] frame; a Method that cannot be read is "Interpreter", as the perf map says.
 */
static struct frame method_frame(struct jvm *j, struct jvm_proc *jp, uint64_t word)
{
	uint64_t method = word & ~PROC_JAVA_METHOD;
	struct jvm_method *c = NULL;
	struct frame f = { NULL, 0 };
	char name[256] = "Interpreter";
	int err = -EAGAIN;

	/* (0, the frame unreadable, is no key: an empty entry holds it. Nor is anything kept
	 * before the structures are: the name would be Interpreter for good.) */
	if (jp->methods && method && jp->interp_known) {
		c = &jp->methods[(method >> 3) % METHODS];
		if (c->method == method)
			return c->frame;
	}
	if (jp->interp_known)
		err = hotspot__method_name(jp->mem_fd, &jp->hs, method, name, sizeof(name));
	if (err) {
		/* Once per Method (cached after), never for 0 (its frame was unreadable). */
		if (method)
			pr_debug("pid %u: method %#" PRIx64 " not named: %s\n", jp->pid, method,
				 strerror(-err));
		snprintf(name, sizeof(name), "Interpreter");
		j->stats.methods_unnamed++;
	}
	if (symbolizer__runtime_frame(j->sym, DSO_JAVA, name, "", 0, &f))
		return (struct frame){ symbolizer__unknown_dso(j->sym), word };
	/* A method unloaded and another at its address keeps the first name: methods are
	 * seldom unloaded, and never while their frames run. */
	if (c)
		*c = (struct jvm_method){ method, f };
	return f;
}

uint32_t jvm__frames(void *arg, uint32_t pid, struct dso *jit, struct frame *frames, uint32_t n,
		     bool *cut, uint64_t now)
{
	struct jvm *j = arg;
	struct jvm_proc **slot, *jp;
	int64_t first_jit = -1;
	bool miss = false;

	pthread_mutex_lock(&j->lock);
	slot = find(j, pid);
	jp = *slot;
	if (!jp) {
		jp = calloc(1, sizeof(*jp));
		if (!jp) {
			pthread_mutex_unlock(&j->lock);
			return n;
		}
		jp->pid = pid;
		jp->tmp_fd = -1;
		jp->mem_fd = -1;
		jp->interval_ns = MIN_INTERVAL_NS;
		*slot = jp;
		j->stats.processes++;
	}
	if (!jp->nr_jits || jp->jits[jp->nr_jits - 1] != jit) {
		if (jp->nr_jits == JITS_MAX) {
			dso__put(jp->jits[0]);
			memmove(jp->jits, jp->jits + 1, (JITS_MAX - 1) * sizeof(*jp->jits));
			jp->nr_jits--;
		}
		jp->jits[jp->nr_jits++] = dso__get(jit);
	}
	/*
	 * Interpreted frames first, named by their methods (no map to ask for): the interpreter
	 * keeps its frame pointer, so the walk went on past them. Not past a compiled frame of a
	 * JVM without frame pointers: what was read there came from any rbp (cut below).
	 */
	for (uint32_t i = 0; i < n; i++) {
		if (frames[i].dso != jit)
			continue;
		if (frames[i].addr & PROC_JAVA_METHOD)
			frames[i] = method_frame(j, jp, frames[i].addr);
		else if (jp->fp != FP_YES)
			break;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (frames[i].dso != jit)
			continue;
		if (first_jit < 0)
			first_jit = i;
		/* Past the first JIT frame of a JVM without frame pointers the "frames" are any
		 * values: no reason to ask for a map. */
		if (first_jit < (int64_t)i && jp->fp != FP_YES)
			break;
		if (!perf_map__lookup(jp->pm, frames[i].addr, NULL)) {
			miss = true;
			break;
		}
	}
	if (miss && !jp->busy && !jp->given_up && now >= jp->next_ns && !queue(j, jp, JOB_MAP))
		jp->busy = true;
	/* Its interpreter, looked for until found (a JVM starting has not generated it yet). */
	if (j->unwinder && !jp->interp_known && !jp->interp_busy && !jp->interp_given_up &&
	    now >= jp->interp_next_ns && !queue(j, jp, JOB_INTERP)) {
		jp->interp_busy = true;
		jp->interp_next_ns = now + MIN_INTERVAL_NS;
	}
	/* Without frame pointers a compiled frame's rbp is any value: what the walk found past
	 * the first JIT frame may be a caller from long ago, or 0, which ends a walk as if it
	 * were complete. Until the JVM said, assume so. */
	if (jp->fp != FP_YES && first_jit >= 0) {
		*cut = true;
		j->stats.stacks_cut++;
		n = (uint32_t)first_jit + 1;
	} else if (n && (frames[n - 1].dso == jit || dso__kind(frames[n - 1].dso) == DSO_JAVA)) {
		/* Java threads start in native code: a walk ending in JIT code stopped short. */
		*cut = true;
	}
	pthread_mutex_unlock(&j->lock);
	return n;
}

void jvm__exit(struct jvm *j, uint32_t pid)
{
	struct jvm_proc **slot, *jp;

	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	slot = find(j, pid);
	jp = *slot;
	if (jp) {
		*slot = jp->next;
		j->stats.processes--;
		/* Without memory for the job, the entry leaks rather than race the thread. */
		queue(j, jp, JOB_EXIT);
	}
	pthread_mutex_unlock(&j->lock);
}

static void exit_cb(void *ctx, uint32_t pid)
{
	jvm__exit(ctx, pid);
}

int jvm__observe(struct jvm *j, struct proctab *pt)
{
	return proctab__observe(pt, &(struct proc_observer){
					    .name = "jvm",
					    .exit = exit_cb,
					    .jit_frames = jvm__frames,
					    .ctx = j,
				    });
}

/*
 * Attach thread: its /tmp and the names of its map and socket, once. Resolved inside its root:
 * through /proc/PID/root/tmp an absolute symlink (a /tmp -> /etc made in a container) would
 * resolve on the host, and the map would be read, and removed at exit, there.
 */
static int open_tmp(struct jvm_proc *jp)
{
	int nspid, root;

	/* Its /tmp as the process sees it: a symlink there resolves in its root (ufile.h). */
	root = ufile__root((int)jp->pid);
	if (root < 0)
		return root == -ENOENT ? -ESRCH : root;
	jp->tmp_fd = ufile__opendir(root, "tmp");
	close(root);
	if (jp->tmp_fd < 0) {
		int err = jp->tmp_fd;

		jp->tmp_fd = -1;
		return err == -ENOENT ? -ESRCH : err;
	}
	nspid = jvmattach__nspid((int)jp->pid);
	if (procfs__ids(jp->pid, &jp->uid, &(int){0}))
		return -ESRCH;
	snprintf(jp->map_name, sizeof(jp->map_name), "perf-%d.map", nspid);
	snprintf(jp->sock_name, sizeof(jp->sock_name), ".java_pid%d", nspid);
	jp->our_listener = faccessat(jp->tmp_fd, jp->sock_name, F_OK, 0) && errno == ENOENT;
	return 0;
}

/* When the process started, in CLOCK_REALTIME seconds (0 if unknown). */
static time_t start_time(uint32_t pid)
{
	unsigned long long ticks = procfs__start_ticks(pid), btime = 0;
	char buf[256];
	FILE *f;

	if (!ticks)
		return 0;
	f = fopen("/proc/stat", "re");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return btime ? (time_t)(btime + ticks / (unsigned long long)sysconf(_SC_CLK_TCK)) : 0;
}

/*
 * A map we did not cause: another writer's (an agent, another profiler) while it is being
 * written, which we must not rewrite under it; or one older than the process, left by an
 * earlier one with its pid (pid 1 of a container over a kept /tmp), which we take over.
 */
static bool foreign_map(struct jvm_proc *jp)
{
	struct stat st;
	time_t started;

	if (jp->ours || fstatat(jp->tmp_fd, jp->map_name, &st, 0))
		return false;
	started = start_time(jp->pid);
	return !started || st.st_mtime >= started;
}

/* An attach, counted by how it ended. */
static int attach(struct jvm *j, struct jvm_proc *jp, const char *op, const char *arg, char *out,
		  size_t out_size)
{
	enum jvmattach_why why;
	int err;

	err = jvmattach__run((int)jp->pid, op, arg, out, out_size, ATTACH_TIMEOUT_MS, &why);
	pthread_mutex_lock(&j->lock);
	j->stats.attach[why]++;
	pthread_mutex_unlock(&j->lock);
	if (err && why != JVMATTACH_OK)
		pr_debug("pid %u: attach: %s (%s)\n", jp->pid, jvmattach__why_name(why),
			 strerror(-err));
	return err;
}

static void ask_fp(struct jvm *j, struct jvm_proc *jp)
{
	char out[128];
	enum jvm_fp fp = FP_UNKNOWN;

	if (!attach(j, jp, "printflag", "PreserveFramePointer", out, sizeof(out))) {
		if (strstr(out, "+PreserveFramePointer"))
			fp = FP_YES;
		else if (strstr(out, "-PreserveFramePointer"))
			fp = FP_NO;
	}
	pthread_mutex_lock(&j->lock);
	jp->fp = fp;
	pthread_mutex_unlock(&j->lock);
}

struct libjvm_find {
	struct map_entry e;
	char path[PATH_MAX];
	bool found;
};

static int find_libjvm(const struct map_entry *e, void *arg)
{
	struct libjvm_find *lf = arg;
	const char *base = strrchr(e->path, '/');

	if (lf->found || !base || strcmp(base, "/libjvm.so"))
		return 0;
	lf->e = *e;
	snprintf(lf->path, sizeof(lf->path), "%s", e->path);
	lf->e.path = lf->path;
	lf->found = true;
	return 1;
}

/*
 * Attach thread: where the JVM's interpreter is, from its own structures, told to the unwinder
 * so that its walks send interpreted frames by their methods. Once the structures are read
 * (looked for again, at most once a second, while the JVM has not generated it yet).
 */
static void learn_interpreter(struct jvm *j, struct jvm_proc *jp)
{
	struct hotspot_offsets hs;
	struct libjvm_find lf = { .found = false };
	uint64_t lo, hi;
	int fd, err = -ESRCH;

	if (!jp->structs_read) {
		if (jp->mem_fd < 0)
			jp->mem_fd = procmem__open(jp->pid);
		if (jp->mem_fd < 0 || maps__for_each((int)jp->pid, true, find_libjvm, &lf) < 0 ||
		    !lf.found)
			goto out;
		fd = maps__open_file((int)jp->pid, &lf.e);
		if (fd < 0)
			goto out;
		err = hotspot__offsets(jp->mem_fd, fd, &lf.e, &hs);
		close(fd);
		pthread_mutex_lock(&j->lock);
		jp->structs_read = true;
		jp->hs = hs;
		if (!jp->methods)
			jp->methods = calloc(METHODS, sizeof(*jp->methods));
		pthread_mutex_unlock(&j->lock);
		if (err || !hs.methods) {
			pr_info("pid %u: its interpreted methods stay unnamed: %s\n", jp->pid,
				err ? strerror(-err) : "HotSpot's tables lack the fields");
			pthread_mutex_lock(&j->lock);
			jp->interp_given_up = true;
			goto out_locked;
		}
	}
	err = hotspot__interpreter(jp->mem_fd, &jp->hs, &lo, &hi);
	if (!err) {
		unwinder__set_java(j->unwinder, jp->pid, lo, hi);
		pr_debug("pid %u: interpreter at %#" PRIx64 "-%#" PRIx64 "\n", jp->pid, lo, hi);
	}
out:
	pthread_mutex_lock(&j->lock);
	if (!err)
		jp->interp_known = true;
out_locked:
	jp->interp_busy = false;
	pthread_mutex_unlock(&j->lock);
}

static void request(struct jvm *j, struct jvm_proc *jp)
{
	struct perf_map *pm = NULL, *old;
	char out[256];
	int err = 0;

	if (jp->tmp_fd < 0)
		err = open_tmp(jp);
	if (!err && foreign_map(jp)) {
		/* Looked at again at every later miss: the writer may stop and remove it. */
		pthread_mutex_lock(&j->lock);
		j->stats.requests_skipped++;
		jp->busy = false;
		jp->next_ns = now_ns() + MAX_INTERVAL_NS;
		pthread_mutex_unlock(&j->lock);
		pr_debug("pid %u: %s is another writer's: left alone\n", jp->pid, jp->map_name);
		return;
	}
	if (!err && jp->fp == FP_UNKNOWN)
		ask_fp(j, jp);
	if (!err)
		err = attach(j, jp, "jcmd", "Compiler.perfmap", out, sizeof(out));
	if (!err) {
		jp->ours = true;
		err = perf_map__load_at(jp->tmp_fd, jp->map_name, jp->uid, &pm);
	}
	pthread_mutex_lock(&j->lock);
	if (err) {
		j->stats.requests_failed++;
		/* A JVM that got a SIGQUIT and started no listener printed a thread dump instead:
		 * never again. One that keeps failing otherwise (-Xrs: no handler) is left too. */
		jp->failures++;
		if (err == -ECONNREFUSED || jp->failures == MAX_FAILURES) {
			jp->given_up = true;
			pr_info("pid %u: cannot attach (%s): its JIT frames stay unnamed\n",
				jp->pid, strerror(-err));
		}
	} else {
		jp->failures = 0;
		j->stats.requests_ok++;
		old = jp->pm;
		jp->pm = pm;
		pm = old;
	}
	jp->busy = false;
	jp->next_ns = now_ns() + jp->interval_ns;
	jp->interval_ns =
	    jp->interval_ns * 2 > MAX_INTERVAL_NS ? MAX_INTERVAL_NS : jp->interval_ns * 2;
	pthread_mutex_unlock(&j->lock);
	perf_map__free(pm);
	if (!err)
		pr_debug("pid %u: perf map of %zu ranges\n", jp->pid, perf_map__nr_ranges(jp->pm));
	else
		pr_debug("pid %u: no perf map: %s%s%.*s\n", jp->pid, strerror(-err),
			 err == -EPROTO ? ": " : "", err == -EPROTO ? (int)strcspn(out, "\n") : 0,
			 out);
}

/* The JVM is gone: its last map names its stored frames from now on, and the file goes. */
static void release(struct jvm *j, struct jvm_proc *jp, bool preload)
{
	if (jp->ours && jp->tmp_fd >= 0) {
		for (uint32_t i = 0; preload && i < jp->nr_jits; i++) {
			int err =
			    symbolizer__jit_preload(j->sym, jp->jits[i], jp->tmp_fd, jp->map_name);

			if (err)
				pr_debug("pid %u: cannot keep its perf map: %s\n", jp->pid,
					 strerror(-err));
		}
		if (!unlinkat(jp->tmp_fd, jp->map_name, 0)) {
			pthread_mutex_lock(&j->lock);
			j->stats.maps_removed++;
			pthread_mutex_unlock(&j->lock);
		}
	}
	/* A JVM removes its socket when it exits, but not when it is killed: the listener we
	 * started must not leave one file per killed JVM behind (once gone, nothing listens). */
	if (preload && jp->our_listener && jp->tmp_fd >= 0)
		unlinkat(jp->tmp_fd, jp->sock_name, 0);
	if (jp->tmp_fd >= 0)
		close(jp->tmp_fd);
	if (jp->mem_fd >= 0)
		close(jp->mem_fd);
	free(jp->methods);
	perf_map__free(jp->pm);
	for (uint32_t i = 0; i < jp->nr_jits; i++)
		dso__put(jp->jits[i]);
	free(jp);
}

static void *jvm__thread(void *arg)
{
	struct jvm *j = arg;

	pthread_mutex_lock(&j->lock);
	for (;;) {
		struct jvm_job *job;

		while (!j->head && !j->stopping)
			pthread_cond_wait(&j->cond, &j->lock);
		if (j->stopping)
			break;
		job = j->head;
		j->head = job->next;
		if (!j->head)
			j->tail = &j->head;
		pthread_mutex_unlock(&j->lock);
		if (job->kind == JOB_EXIT)
			release(j, job->jp, true);
		else if (job->kind == JOB_INTERP)
			learn_interpreter(j, job->jp);
		else
			request(j, job->jp);
		free(job);
		pthread_mutex_lock(&j->lock);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

struct jvm *jvm__new(struct symbolizer *sym, struct unwinder *unwinder, int *err)
{
	struct jvm *j = calloc(1, sizeof(*j));

	if (!j) {
		*err = -ENOMEM;
		return NULL;
	}
	j->sym = sym;
	j->unwinder = unwinder;
	j->tail = &j->head;
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->cond, NULL);
	*err = -pthread_create(&j->thread, NULL, jvm__thread, j);
	if (*err) {
		pthread_cond_destroy(&j->cond);
		pthread_mutex_destroy(&j->lock);
		free(j);
		return NULL;
	}
	return j;
}

void jvm__free(struct jvm *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->stopping = true;
	pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
	pthread_join(j->thread, NULL);
	/* Exits still queued first: their processes are no longer in the table. */
	while (j->head) {
		struct jvm_job *job = j->head;

		j->head = job->next;
		if (job->kind == JOB_EXIT)
			release(j, job->jp, false);
		free(job);
	}
	for (int i = 0; i < BUCKETS; i++) {
		while (j->buckets[i]) {
			struct jvm_proc *jp = j->buckets[i];

			j->buckets[i] = jp->next;
			release(j, jp, false);
		}
	}
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

void jvm__stats(struct jvm *j, struct jvm_stats *out)
{
	pthread_mutex_lock(&j->lock);
	*out = j->stats;
	pthread_mutex_unlock(&j->lock);
}
