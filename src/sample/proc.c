// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "proc: " fmt

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gelf.h>
#include <libelf.h>

#include "lib/counters.h"
#include "lib/log.h"
#include "lib/timeconst.h"
#include "proc/proctab.h"
#include "symbolize/dso.h"
#include "symbolize/elf.h"
#include "unwind/unwind.h"
#include "bpf/proc_abi.h"
#include "bpf/unwind_abi.h"
#include "bpf/proc.skel.h"
#include "sample/proc.h"

#define MAX_PENDING_EXITS 4096
/* C library files watched for dlopen at most: one per distro in the host's containers. */
#define MAX_DLOPEN_LIBS 16
/*
 * At exec only the executable and the loader are mapped; the loader maps the libraries a little
 * later, and a trace-context variable in one of them is found only when the maps are read
 * again. A sample would do that (its frames miss), but the first sample in a traced thread
 * must already find the context: so a process still alive after its exec has its maps read
 * again at each delay of relearn_ns, counted from the exec in the kernel. The loader is done
 * in well under a millisecond on an idle machine (LD_DEBUG=statistics: ~50 us), so the first
 * read leaves main() a window of about a millisecond without its context; the second is for a
 * loader slowed by a busy machine. That one, past the loading time, also tells the samplers
 * the process has no context when none was found, and they stop looking: a loader slower
 * still (CI's, under the whole suite: one start in six lost all its labels) would leave the
 * process unlabelled for good, so a third read comes at 32 ms. (A process gone by then, the
 * usual short-lived one, costs nothing.)
 */
#define RELEARN_LAST_NS (4 * NSEC_PER_MSEC)
#define RELEARN_SLOW_NS (32 * NSEC_PER_MSEC)
/* The last stage is a dlsym report's alone (PROC_EV_MAPPED): past BPF's gate, whatever a
 * process loaded after the report that BPF did not report is read then. */
#define RELEARN_GATED 3
static const unsigned long long relearn_ns[] = { NSEC_PER_MSEC, RELEARN_LAST_NS, RELEARN_SLOW_NS,
						 PROC_DLSYM_GATE_NS + NSEC_PER_MSEC };
/* The stage each leads to (exec: 1 ms, then 4 ms, then 32 ms), or -1. */
static const int relearn_next[] = { 1, 2, -1, -1 };
/* The last re-read, due from the exec in the kernel, must find the process settled
 * (proc__loading, timed from when the event was handled): a millisecond to spare for that. */
_Static_assert(RELEARN_LAST_NS >= PROC_LOADING_NS + NSEC_PER_MSEC,
	       "the last re-read comes after the loading time");
#define NR_RELEARN (sizeof(relearn_ns) / sizeof(relearn_ns[0]))
#define MAX_RELEARN 1024

/*
 * Exits wait one drain: a sample taken while the process was exiting (in exit_mmap, say) may
 * be drained after its exit event, and should still find the process.
 */
struct proc_collector {
	struct collect_ctx *ctx;
	struct proc_bpf *skel;
	bool watch_dlopen; /* proc_collector__watch_dlopen was called */
	uint32_t pending[2][MAX_PENDING_EXITS];
	uint32_t nr_pending[2];
	int cur;
	/* Per delay, execs whose maps are read again at exec + relearn_ns[i] (FIFOs: exec
	 * times only grow). */
	struct relearn_fifo {
		struct {
			uint32_t pid;
			unsigned long long exec_ns;
		} e[MAX_RELEARN];
		uint32_t head, nr;
	} relearn[NR_RELEARN];
	unsigned long long relearned;
	unsigned long long mapped; /* dlsym after a dlopen: maps read again */
	unsigned long long quiet_exes; /* in the quiet_exes map now */
	unsigned long long unquieted;  /* taken out of it (a process of one needed more) */
	/* C libraries whose dlsym is probed (ingest thread only) */
	struct dlopen_lib {
		uint64_t dev, ino; /* as the maps say (struct proc_map) */
		struct bpf_link *link;
	} dlopen_libs[MAX_DLOPEN_LIBS];
	uint32_t nr_dlopen_libs;
	unsigned long long dlopen_failed;
	/* glibc files whose __libc_start_main is probed (attach_libc_start) */
	struct dlopen_lib start_libs[MAX_DLOPEN_LIBS];
	uint32_t nr_start_libs;
};

/* Full FIFOs drop the newest: a storm of execs is re-read by its samples instead. */
static void relearn__push(struct relearn_fifo *q, uint32_t pid, unsigned long long exec_ns)
{
	uint32_t i;

	if (q->nr == MAX_RELEARN)
		return;
	i = (q->head + q->nr++) % MAX_RELEARN;
	q->e[i].pid = pid;
	q->e[i].exec_ns = exec_ns;
}

/*
 * An exiting process's mappings: they name a quiet one never learned, and say whether what was
 * learned of another was all it needed, its executable then quiet from its next exec on.
 */
static void exit_maps(struct proc_collector *pc, const struct proc_maps_ev *e)
{
	struct proc_exit_map maps[PROC_EXIT_MAPS];
	uint32_t n = e->nr < PROC_EXIT_MAPS ? e->nr : PROC_EXIT_MAPS;
	struct proc_exe_id exe;
	struct unwind_inode key;
	int verdict;

	for (uint32_t i = 0; i < n; i++)
		maps[i] = (struct proc_exit_map){ e->maps[i].start, e->maps[i].end, e->maps[i].pgoff,
						  e->maps[i].ino, e->maps[i].dev };
	verdict = proctab__exit_maps(pc->ctx->proctab, e->pid, maps, n,
				     e->flags & PROC_MAPS_TRUNCATED, &exe);
	/* A trace context published: its samplers look it up from the first sample on. */
	if (verdict > 0 && (e->flags & PROC_MAPS_TRACECTX))
		verdict = 0;
	if (verdict < 0)
		return;
	key = (struct unwind_inode){ .dev = exe.dev, .ino = exe.ino, .ctime_ns = exe.ctime_ns };
	if (verdict) {
		__u8 one = 1;

		if (!bpf_map_update_elem(bpf_map__fd(pc->skel->maps.quiet_exes), &key, &one,
					 BPF_NOEXIST))
			pc->quiet_exes++;
	} else if (!bpf_map_delete_elem(bpf_map__fd(pc->skel->maps.quiet_exes), &key)) {
		pc->quiet_exes--;
		pc->unquieted++;
	}
}

static void handle_record(struct proc_collector *pc, const struct proc_ev *e);

static int handle_event(void *arg, void *data, size_t size)
{
	struct proc_collector *pc = arg;
	const struct proc_ev *e = data;
	bool nested = pc->ctx->in_proc_ring;

	if (size < sizeof(*e))
		return 0;
	pc->ctx->in_proc_ring = true;
	if (e->type == PROC_EV_MAPS && size >= sizeof(struct proc_maps_ev))
		exit_maps(pc, data);
	else
		handle_record(pc, e);
	pc->ctx->in_proc_ring = nested;
	return 0;
}

static void handle_record(struct proc_collector *pc, const struct proc_ev *e)
{
	switch (e->type) {
	case PROC_EV_EXEC: {
		unsigned long long now = now_ns();
		bool quiet = e->flags & PROC_EV_QUIET;
		struct proc_exe_id exe = { .ino = e->exe_ino,
					   .dev = e->exe_dev,
					   .forked_from = e->forked_from,
					   .exec_ns = e->time_ns,
					   .cgroup_key = e->cgroup_key,
					   .cgroup_moves = e->cgroup_moves,
					   .ctime_ns = e->exe_ctime_ns };
		struct proc *p;

		memcpy(exe.comm, e->comm, sizeof(exe.comm));
		exe.comm[sizeof(exe.comm) - 1] = '\0';
		/* Learning the maps now tells every observer of processes (src/daemon/main.c lists
		 * them): the trace-context variable of the executable is found from its file
		 * alone, so the first samples are labelled too; its unwind tables are built
		 * first; Python and memory targets look at the new image. A quiet executable's
		 * process needs none of that (bpf/proc_abi.h): nothing is read for it now. */
		p = proctab__exec(pc->ctx->proctab, e->pid, &exe, quiet, now);
		if (p && !quiet)
			relearn__push(&pc->relearn[0], e->pid, e->time_ns);
		break;
	}
	case PROC_EV_EXIT:
		if (pc->nr_pending[pc->cur] == MAX_PENDING_EXITS)
			proc_collector__reap(pc);
		pc->pending[pc->cur][pc->nr_pending[pc->cur]++] = e->pid;
		/* A re-read due meanwhile would only find it gone (a short-lived process's
		 * usual end: its exit comes before the first re-read). */
		proctab__exiting(pc->ctx->proctab, e->pid);
		break;
	case PROC_EV_MAPPED: {
		/* dlsym after a dlopen: the observers see the library it loaded. The re-reads 1,
		 * 4, 32 and 51 ms later catch what the same burst loaded next (a runtime's dlopen of
		 * its driver), which BPF does not report within its 50 ms gate. */
		unsigned long long now = now_ns();

		proctab__refresh(pc->ctx->proctab, e->pid, now);
		relearn__push(&pc->relearn[0], e->pid, e->time_ns);
		relearn__push(&pc->relearn[RELEARN_GATED], e->pid, e->time_ns);
		pc->mapped++;
		break;
	}
	}
}

/* ---- dlopen: dlsym's entry in the C library ------------------------------------------------ */

/* Whether a file may define dlsym: glibc's libc (2.34 and later), its libdl before, musl's libc
 * (its loader). */
static bool has_dlsym(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	       !strncmp(base, "libdl.so", 8) || !strncmp(base, "libdl-", 6) ||
	       !strncmp(base, "ld-musl", 7);
}

#define MAX_DLOPEN_SITES 4

struct find_sym {
	Elf *elf;
	const char *const *names; /* NULL-terminated */
	unsigned long off[MAX_DLOPEN_SITES];
	size_t n;
};

static bool named(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(name, *names))
			return true;
	return false;
}

static int find_sym(const struct elf_symbol *s, void *arg)
{
	struct find_sym *f = arg;
	uint64_t off;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_FUNC || s->sym.st_shndx == SHN_UNDEF ||
	    !named(s->name, f->names) || elf__vaddr_to_offset(f->elf, s->sym.st_value, &off))
		return 0;
	/* Each name is exported at two versions, at one address: one probe. */
	for (size_t i = 0; i < f->n; i++)
		if (f->off[i] == off)
			return 0;
	f->off[f->n++] = off;
	return f->n == MAX_DLOPEN_SITES;
}

/*
 * Probes, for every process that maps it, the entry of each function of names (NULL-ended) the
 * C library file fd defines, with prog; *link gets the link. 0, -ENOENT when it defines none,
 * or a negative errno.
 */
static int attach_named(struct bpf_program *prog, int fd, const char *const *names,
			struct bpf_link **link)
{
	struct find_sym f = { .names = names };
	LIBBPF_OPTS(bpf_uprobe_multi_opts, opts);
	char path[64];

	elf_version(EV_CURRENT);
	f.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!f.elf)
		return -ENOEXEC;
	elf__for_each_symbol(f.elf, ELF_DYNSYM, find_sym, &f);
	elf_end(f.elf);
	if (!f.n)
		return -ENOENT;
	opts.offsets = f.off;
	opts.cnt = f.n;
	/* The very file mapped, whichever mount namespace mapped it. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	*link = bpf_program__attach_uprobe_multi(prog, -1, path, NULL, &opts);
	return *link ? 0 : -errno;
}

/* Probes the entry of a C library file's (fd's) dlsym for every process that maps it. */
static void attach_dlopen(struct proc_collector *pc, int fd, const struct proc_map *m,
			  const char *name)
{
	static const char *const names[] = { "dlsym", "dlvsym", NULL };
	struct dlopen_lib *l = &pc->dlopen_libs[pc->nr_dlopen_libs];
	int err = attach_named(pc->skel->progs.proc_dlsym, fd, names, &l->link);

	/* A libc without it (glibc before 2.34 keeps it in libdl): known, nothing probed. */
	if (!err) {
		pr_debug("%s: dlopen watched\n", name);
	} else if (err != -ENOENT) {
		pc->dlopen_failed++;
		pr_warn("%s: cannot watch its dlopen calls\n", name);
	}
	/* Looked at once, watched or not: every process maps its libc, and one that cannot be
	 * probed must not be parsed again at each of their maps reads. */
	l->dev = m->dev;
	l->ino = m->ino;
	pc->nr_dlopen_libs++;
}

/*
 * glibc's __libc_start_main: the loader has mapped every library by then, and main() has not
 * run. A process walked by the table its exec published (the executable's and the loader's
 * text: a quiet one's, never learned) gets one of every executable mapping there, so that
 * frames in its libraries are not left to one bpf_find_vma a sample. Its first instruction
 * is a push, which the kernel emulates (~0.5 us a process).
 */
static void attach_libc_start(struct proc_collector *pc, int fd, const struct proc_map *m,
			      const char *name)
{
	static const char *const names[] = { "__libc_start_main", NULL };
	struct dlopen_lib *l = &pc->start_libs[pc->nr_start_libs];
	int err = attach_named(pc->skel->progs.proc_libc_start, fd, names, &l->link);

	if (err && err != -ENOENT)
		pr_debug("%s: cannot probe __libc_start_main: %s\n", name, strerror(-err));
	l->dev = m->dev;
	l->ino = m->ino;
	pc->nr_start_libs++;
}

static bool lib_known(const struct dlopen_lib *libs, uint32_t n, const struct proc_map *m)
{
	for (uint32_t k = 0; k < n; k++)
		if (libs[k].dev == m->dev && libs[k].ino == m->ino)
			return true;
	return false;
}

static void maps_cb(void *ctx, uint32_t pid, const struct proc_map *maps, uint32_t n)
{
	struct proc_collector *pc = ctx;

	for (uint32_t i = 0; pc->skel->rodata->unwind_tables && i < n; i++) {
		const char *base = strrchr(dso__path(maps[i].dso), '/');
		int fd;

		if ((i && maps[i].ino == maps[i - 1].ino) || !maps[i].ino || !base ||
		    strncmp(base + 1, "libc.so", 7) || pc->nr_start_libs == MAX_DLOPEN_LIBS ||
		    lib_known(pc->start_libs, pc->nr_start_libs, &maps[i]))
			continue;
		fd = proc_map__open(pid, &maps[i]);
		if (fd < 0)
			continue;
		attach_libc_start(pc, fd, &maps[i], dso__path(maps[i].dso));
		close(fd);
	}
	for (uint32_t i = 0; pc->watch_dlopen && i < n; i++) {
		int fd;

		/* By the mapping's own inode: a container's libc may share the host's dso by
		 * build ID, never its inode. */
		if ((i && maps[i].ino == maps[i - 1].ino) || !maps[i].ino ||
		    !has_dlsym(dso__path(maps[i].dso)) || pc->nr_dlopen_libs == MAX_DLOPEN_LIBS ||
		    lib_known(pc->dlopen_libs, pc->nr_dlopen_libs, &maps[i]))
			continue;
		fd = proc_map__open(pid, &maps[i]);
		if (fd < 0)
			continue;
		attach_dlopen(pc, fd, &maps[i], dso__path(maps[i].dso));
		close(fd);
	}
}

int proc_collector__watch_dlopen(struct proc_collector *pc, const char *const *names)
{
	int fd = bpf_map__fd(pc->skel->maps.dlsym_names);

	for (uint32_t i = 0; names[i]; i++) {
		struct { char prefix[PROC_DLSYM_NAME_LEN]; } v = { { 0 } };

		if (i == PROC_DLSYM_NAMES || strlen(names[i]) >= PROC_DLSYM_NAME_LEN)
			return -E2BIG;
		memcpy(v.prefix, names[i], strlen(names[i]));
		if (bpf_map_update_elem(fd, &i, &v, BPF_ANY))
			return -errno;
	}
	pc->watch_dlopen = true;
	return 0;
}

static uint32_t parent_cb(void *ctx, uint32_t pid)
{
	struct proc_collector *pc = ctx;
	uint32_t ppid;

	return bpf_map_lookup_elem(bpf_map__fd(pc->skel->maps.fork_parents), &pid, &ppid) ? 0 :
											      ppid;
}

struct proc_collector *proc_collector__new(struct collect_ctx *ctx, int *err)
{
	struct proc_collector *pc = calloc(1, sizeof(*pc));

	if (!pc) {
		*err = -ENOMEM;
		return NULL;
	}
	pc->ctx = ctx;
	pc->skel = proc_bpf__open();
	if (!pc->skel) {
		*err = -errno;
		pr_err("cannot load BPF programs: %s\n", strerror(-*err));
		goto out_free;
	}
	/* The unwinder's mapping tables, whose entry an exec drops (and replaces with the
	 * executable's text, found by unwind_inodes). */
	pc->skel->rodata->unwind_tables = ctx->unwinder != NULL;
	/* Attached per C library file (proc_collector__watch_dlopen). */
	bpf_program__set_autoattach(pc->skel->progs.proc_dlsym, false);
	*err = ctx->unwinder ? bpf_map__reuse_fd(pc->skel->maps.unwind_procs,
						 unwinder__map_fd(ctx->unwinder, "unwind_procs")) ?:
				       bpf_map__reuse_fd(pc->skel->maps.unwind_inodes,
							 unwinder__map_fd(ctx->unwinder,
									  "unwind_inodes")) :
			       0;
	if (!*err)
		*err = proc_bpf__load(pc->skel);
	if (*err) {
		pr_err("cannot load BPF programs: %s\n", strerror(-*err));
		goto out_destroy;
	}
	*err = proc_bpf__attach(pc->skel);
	if (*err) {
		pr_err("cannot attach to sched_process_exec/exit: %s\n", strerror(-*err));
		goto out_destroy;
	}
	/* Mapped .bss, no syscall to read: until proc_collector__free. */
	proctab__watch_cgroups(ctx->proctab,
			       (const volatile uint64_t *)&pc->skel->bss->cgroup_moves,
			       (const volatile uint64_t *)&pc->skel->bss->cgroup_renames);
	ctx->known_pids_fd = bpf_map__fd(pc->skel->maps.known_pids);
	ctx->tracectx_fd = bpf_map__fd(pc->skel->maps.tracectx_offsets);
	ctx->python_fd = bpf_map__fd(pc->skel->maps.python_procs);
	ctx->python_threads_fd = bpf_map__fd(pc->skel->maps.python_threads);
	ctx->lua_fd = bpf_map__fd(pc->skel->maps.lua_procs);
	ctx->lua_threads_fd = bpf_map__fd(pc->skel->maps.lua_threads);
	*err = collect__add_ring(ctx, bpf_map__fd(pc->skel->maps.proc_events), handle_event, pc,
				  &ctx->proc_ring) ?:
	       proctab__observe(ctx->proctab, &(struct proc_observer){
						      .name = "procs",
						      .maps = maps_cb,
						      .parent = parent_cb,
						      .ctx = pc,
					      });
	if (*err)
		goto out_destroy;
	return pc;

out_destroy:
	proctab__watch_cgroups(ctx->proctab, NULL, NULL);
	proc_bpf__destroy(pc->skel);
out_free:
	free(pc);
	return NULL;
}

int proc_collector__relearn(struct proc_collector *pc, unsigned long long now, int max_ms)
{
	int wait_ms = max_ms;

	for (uint32_t stage = 0; stage < NR_RELEARN; stage++) {
		struct relearn_fifo *q = &pc->relearn[stage];

		while (q->nr) {
			uint32_t pid = q->e[q->head].pid;
			unsigned long long exec_ns = q->e[q->head].exec_ns;
			unsigned long long due = exec_ns + relearn_ns[stage];
			/* Only a process still known (not exited, not exec'd again since: its own
			 * entry follows). One gone already is dropped before its time: under exec
			 * churn most are, and none of them then wakes this loop. */
			struct proc *p = proctab__find(pc->ctx->proctab, pid);

			if (p && !proc__exited(p) && due > now) {
				unsigned long long ms = (due - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;

				if (ms < (unsigned long long)wait_ms)
					wait_ms = (int)ms;
				break;
			}
			q->head = (q->head + 1) % MAX_RELEARN;
			q->nr--;
			if (!p || proc__exited(p))
				continue;
			proctab__refresh(pc->ctx->proctab, pid, now);
			pc->relearned++;
			if (relearn_next[stage] >= 0)
				relearn__push(&pc->relearn[relearn_next[stage]], pid, exec_ns);
		}
	}
	return wait_ms;
}

void proc_collector__reap(struct proc_collector *pc)
{
	int old = !pc->cur;

	/* Apply the exits of the drain before this one; this drain's wait for the next. */
	for (uint32_t i = 0; i < pc->nr_pending[old]; i++) {
		proctab__exit(pc->ctx->proctab, pc->pending[old][i]);
	}
	pc->nr_pending[old] = 0;
	pc->cur = old;
}

void proc_collector__free(struct proc_collector *pc)
{
	if (!pc)
		return;
	for (uint32_t i = 0; i < pc->nr_dlopen_libs; i++)
		bpf_link__destroy(pc->dlopen_libs[i].link);
	for (uint32_t i = 0; i < pc->nr_start_libs; i++)
		bpf_link__destroy(pc->start_libs[i].link);
	proctab__watch_cgroups(pc->ctx->proctab, NULL, NULL);
	proc_bpf__destroy(pc->skel);
	free(pc);
}

void proc_collector__stats(struct proc_collector *pc, struct proc_collector_stats *out)
{
	unsigned long long c[PROC_CNT__MAX] = { 0 };

	counters__read(bpf_map__fd(pc->skel->maps.proc_counters), c, PROC_CNT__MAX);
	out->execs = c[PROC_CNT_EXEC];
	out->exits = c[PROC_CNT_EXIT];
	out->dropped = c[PROC_CNT_DROP_RINGBUF];
	out->exec_tables = c[PROC_CNT_EXEC_TABLES];
	out->fork_tables = c[PROC_CNT_FORK_TABLES];
	out->relearned = pc->relearned;
	out->quiet_execs = c[PROC_CNT_QUIET_EXECS];
	out->exit_maps = c[PROC_CNT_EXIT_MAPS];
	out->exit_maps_unsaid = c[PROC_CNT_EXIT_MAPS_UNSAID];
	out->start_tables = c[PROC_CNT_START_TABLES];
	out->quiet_exes = pc->quiet_exes;
	out->unquieted = pc->unquieted;
	out->mapped = pc->mapped;
	out->dlopen_libs = pc->nr_dlopen_libs;
	out->dlopen_failed = pc->dlopen_failed;
}
