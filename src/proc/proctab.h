/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_PROC_PROCTAB_H
#define AUTOPROF_PROC_PROCTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize/frame.h"

/*
 * The processes autoprof has seen: their executable name and executable mappings, learned when
 * they exec (so short-lived processes resolve) or when their first sample arrives, re-read when a
 * sample falls outside every known mapping (dlopen), and dropped when they exit.
 * Used by the ingest thread only; stats may be read from any thread.
 */
struct proctab;
struct proc;
struct symbolizer;
struct container_stats;

/* One executable mapping of a process (read-only for everyone but the proctab). */
struct proc_map {
	uint64_t start, end, pgoff;
	struct dso *dso; /* the file; the process's JIT dso for anonymous code */
	/* The mapped file's own identity (kernel_dev(), inode; 0 for anonymous code): a copy of
	 * a file elsewhere (a container's) shares its dso by build ID, never its inode. */
	uint64_t dev, ino;
};

/*
 * Opens the very file of pid's mapping m (maps__open_file: /proc/PID/map_files, whatever mount
 * namespace), not m->dso's, which may be a copy with the same build ID under another inode.
 * Returns an fd the caller closes, or a negative errno.
 */
int proc_map__open(uint32_t pid, const struct proc_map *m);

struct proctab *proctab__new(struct symbolizer *sym);

/*
 * A listener of processes' lives: every module that keeps something per process registers one
 * (src/daemon/main.c lists them all, in the order they are told). Any callback may be NULL. All are
 * called on the thread that calls into the proctab (the ingest thread), in registration order.
 */
struct proc_observer {
	const char *name;
	/*
	 * pid's executable mappings were (re)read: at first sight, at exec, when a collector
	 * refreshed them, when samples missed them. maps in address order, borrowed for the
	 * call. n == 0: they were dropped (a new image is being read, or the process is gone).
	 */
	void (*maps)(void *ctx, uint32_t pid, const struct proc_map *maps, uint32_t n);
	/* pid exec'd: its new image's maps were read (maps came first). p is NULL when out of
	 * memory, or for a quiet exec (nothing learned yet: proctab__exec); borrowed, as
	 * proctab__get's. */
	void (*exec)(void *ctx, uint32_t pid, struct proc *p);
	/* pid exited: told once its exit event was drained (proctab__exit), known or not. */
	void (*exit)(void *ctx, uint32_t pid);
	/*
	 * Each stack of a JVM (libjvm.so mapped) with frames in its JIT dso: may ask for names and
	 * cut the stack where it cannot be trusted; returns the frames to keep (<= n), *cut set
	 * when it cut. The first observer with one answers (src/runtime/jvm.c).
	 */
	uint32_t (*jit_frames)(void *ctx, uint32_t pid, struct dso *jit, struct frame *frames,
			       uint32_t n, bool *cut, uint64_t now_ns);
	/*
	 * The process pid was forked from, if it has not exec'd since (0: not known): a child
	 * gone before its maps were read is named by its parent's, the image it ran. The first
	 * observer with one answers (src/sample/proc.c).
	 */
	uint32_t (*parent)(void *ctx, uint32_t pid);
	/*
	 * Whether this observer did something for pid's current image that the image's next
	 * processes need at their exec (a runtime found, a target; a trace context published is
	 * BPF's to say, src/sample/proc.c):
	 * asked as a process that exec'd exits, before its exit is told. No observer claiming,
	 * its executable may become quiet (proctab__exit_maps).
	 */
	bool (*claims)(void *ctx, uint32_t pid);
	void *ctx;
};

#define PROCTAB_MAX_OBSERVERS 8
/* Adds a copy of *o to the list. 0, or -ENOSPC past PROCTAB_MAX_OBSERVERS. */
int proctab__observe(struct proctab *pt, const struct proc_observer *o);
/* fn(ctx) is called when a maps read finds its process gone (or past exit_mm, its maps read
 * empty or in part): what its exit reported may be drained then (proctab__exit_maps). */
void proctab__on_gone(struct proctab *pt, void (*fn)(void *ctx), void *ctx);
/* Whether p's maps are being read for a new image (true only inside a maps callback of an
 * exec): what was learned of the old image is stale. */
bool proc__new_image(const struct proc *p);
/*
 * Whether p was exec'd less than PROC_LOADING_NS ago: its dynamic loader may still be mapping
 * libraries (done in well under 1 ms on an idle machine), so a read of its maps may miss what
 * they bring. sample/proc.c reads the maps again at 1 and 4 ms after exec: the second is past it.
 */
#define PROC_LOADING_NS 3000000ULL
bool proc__loading(const struct proc *p, uint64_t now_ns);
void proctab__free(struct proctab *pt); /* accepts NULL */

/* The executable's file, as the kernel names it at exec (dev: major << 20 | minor). */
struct proc_exe_id {
	uint64_t ino;
	uint32_t dev;
	/* The process it was forked from, if it ran that one's image until this exec (0: not
	 * known), and when the exec was (CLOCK_MONOTONIC, as BPF's samples): a sample taken
	 * before then is named by that parent's maps. */
	uint32_t forked_from;
	uint64_t exec_ns;
	/* Its cgroups at exec as one key, and BPF's count of moves then (struct proc_ev): the
	 * container ID is kept by them (proc/container.h). 0: not known. */
	uint64_t cgroup_key;
	uint64_t cgroup_moves;
	/* Its change time, as BPF read it (struct unwind_inode's): the quiet key with ino, dev. */
	int64_t ctime_ns;
	/* Its name as the kernel has it (the file's, cut to 15 bytes): a quiet process's until
	 * it is learned. */
	char comm[16];
};
/* The process image changed: forget what we knew and learn it now. Returns the process
 * (borrowed, as proctab__get's), or NULL when out of memory. exe: NULL when not known (its
 * name then comes from /proc/PID/exe). quiet: the executable is quiet (proctab__exit_maps):
 * nothing is read now; its samples learn it (proctab__user_frames), or its exit's mappings
 * name it (proctab__exit_maps). */
struct proc *proctab__exec(struct proctab *pt, uint32_t pid, const struct proc_exe_id *exe,
			   bool quiet, uint64_t now_ns);
/*
 * The executable mappings of pid, a process that exec'd, as its exit found them (maps: in
 * address order, .dso unused; truncated: there were more). A process exec'd quietly and
 * never learned is given them (its last samples are named by them). Of one learned at its
 * exec, tells whether its executable can be quiet: 1 (every file it mapped was learned
 * while it ran, and neither it nor any observer needed anything at its exec: *exe says
 * which executable), 0 (not: *exe says which, to stop being quiet), or -1 (nothing to say).
 * Of one never learned: 0 when it mapped a file never read, or more than its exit reported.
 */
struct proc_exit_map {
	uint64_t start, end, pgoff, ino;
	uint32_t dev;
};
int proctab__exit_maps(struct proctab *pt, uint32_t pid, const struct proc_exit_map *maps,
		       uint32_t n, bool truncated, struct proc_exe_id *exe);
/* Whether p exec'd quietly and has not been learned since. */
bool proc__unlearned(const struct proc *p);
void proctab__exit(struct proctab *pt, uint32_t pid);
/* Its exit was seen and takes effect later (proc_collector__reap): meanwhile its maps are not
 * read again, and its samples in flight resolve by the last ones. */
void proctab__exiting(struct proctab *pt, uint32_t pid);
/* Whether p exited (its exit seen, or its maps found gone). */
bool proc__exited(const struct proc *p);
/* Reads the process's mappings again now (a collector knows they changed); not those of a
 * process that exited. */
void proctab__refresh(struct proctab *pt, uint32_t pid, uint64_t now_ns);
/* Drops processes that are gone (in case an exit event was lost). */
void proctab__sweep(struct proctab *pt);

/*
 * The process, learned now if new. kthread: a kernel thread (no mappings to read). Borrowed,
 * valid until the next proctab call; NULL only when out of memory.
 */
struct proc *proctab__get(struct proctab *pt, uint32_t pid, int kthread, uint64_t now_ns);
/*
 * As proctab__get, for a sample of pid: described says that it needs none of the process's
 * maps (every user frame came as its file and offset, PROC_NOT_ADDRESS, and its walk was whole,
 * or it has no user frames). A quiet process not learned yet is then left so, unless it exec'd
 * QUIET_LEARN_AFTER_NS (1 s) ago or more: churn's processes are named with no read at all.
 */
struct proc *proctab__get_sample(struct proctab *pt, uint32_t pid, int kthread, bool described,
				 uint64_t now_ns);
/*
 * Learns every user process running now (those already known stay as they are), so that the
 * listener has their mappings (unwind tables, trace contexts) before their samples come.
 * Returns how many are known.
 */
uint32_t proctab__scan(struct proctab *pt, uint64_t now_ns);
/* The process if known, never learned here (NULL otherwise). Borrowed, as proctab__get's. */
struct proc *proctab__find(struct proctab *pt, uint32_t pid);
/* Its executable mappings as last read, in address order (borrowed, as the process). */
const struct proc_map *proc__maps(const struct proc *p, uint32_t *n);
/* Executable basename ("[kernel]" for kernel threads, "" when unknown). */
const char *proc__exe(const struct proc *p);
/* Changes whenever the process's mappings were (re)read: what a collector derived from them
 * (e.g. where the trace context lives) may have changed too. */
uint32_t proc__maps_generation(const struct proc *p);
/* Executable path as the process sees it, and container id from its cgroup; "" if unknown. */
const char *proc__exe_path(const struct proc *p);
const char *proc__container_id(const struct proc *p);
/*
 * service.name: from the process context it publishes (OTEP 4719 OTEL_CTX mapping, re-read with
 * its maps) when that names one, else OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES in its
 * environment; "" if none.
 */
const char *proc__service(const struct proc *p);
#define PROC_NOT_ADDRESS (1ULL << 63)
#define PROC_JAVA_METHOD (1ULL << 62)
/*
 * Translates user addresses to frames (same order). Frames borrow the dso from the proctab; the
 * store takes its own references. Addresses in no mapping become [unknown] frames, or, in a
 * process with JIT code, frames of its JIT dso (named through its perf map). Words past user
 * space (PROC_NOT_ADDRESS: a frame BPF sent as its file and offset) are left to the caller:
 * [unknown] frames here, no miss. A JVM's interpreted frames (PROC_JAVA_METHOD: the Method it
 * runs) are frames of its JIT dso with that word, for the jit_frames observer to name. Returns
 * the frames
 * written, fewer than n when the jit_frames observer cut the stack: *cut is then set and the caller adds the
 * [truncated] frame (out has room for n + 1).
 */
uint32_t proctab__user_frames(struct proctab *pt, struct proc *p, const uint64_t *addrs,
			      uint32_t n, struct frame *out, uint64_t now_ns, bool *cut);
/*
 * The process whose image p ran at sample_ns (CLOCK_MONOTONIC, as BPF's samples; 0: not known):
 * before p's exec, the parent it was forked from (learned now if need be), whose maps and name
 * a stack taken then has; otherwise p. Borrowed, as proctab__get's.
 */
struct proc *proctab__image_at(struct proctab *pt, struct proc *p, uint64_t sample_ns,
			       uint64_t now_ns);

struct proctab_stats {
	uint64_t processes;	/* tracked now */
	uint64_t maps_reads;	/* /proc/PID/maps reads */
	uint64_t maps_gone;	/* of which found the process already gone */
	uint64_t maps_errors;	/* of which failed otherwise */
	uint64_t maps_inherited; /* gone ones named by the parent they were forked from */
	uint64_t stacks_before_exec; /* taken before an exec, named by the forking parent's image */
	uint64_t frames_unmapped; /* user addresses in no known mapping */
	uint64_t ctx_reads;	/* process context (OTEL_CTX) reads */
	uint64_t ctx_gone;	/* of which found the process already gone */
	uint64_t ctx_unpublished; /* of which found it not published yet, or changing */
	uint64_t ctx_errors;	/* of which failed otherwise (unreadable, malformed) */
	uint64_t quiet_execs;	/* execs of quiet executables: nothing read at exec */
	uint64_t quiet_learned; /* of which learned later, for their samples */
	uint64_t quiet_described; /* samples of them named with no read (proctab__get_sample) */
	uint64_t named_at_exit; /* of which given the mappings their exit reported */
};
void proctab__stats(struct proctab *pt, struct proctab_stats *out);
/* Its container IDs' cache (proc/container.h), NULL if none. */
void proctab__container_stats(struct proctab *pt, struct container_stats *out);

/* BPF's counts of cgroup moves and renames, mapped (container_ids__watch): container IDs are
 * then kept by the cgroups a process has at exec. */
void proctab__watch_cgroups(struct proctab *pt, const volatile uint64_t *moves,
			    const volatile uint64_t *renames);

#endif
