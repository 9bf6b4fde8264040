/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_BPF_PROC_ABI_H
#define AUTOPROF_BPF_PROC_ABI_H

/* Shared between bpf/proc.bpf.c and src/sample/proc.c: __u32/__u64 only, no libc. */

enum proc_event_type {
	PROC_EV_EXEC = 1, /* a process replaced its image: its mappings must be learned now */
	PROC_EV_EXIT = 2, /* a thread group leader exited: drop what we hold for it */
	PROC_EV_MAPPED = 3, /* dlsym with mappings changed (a dlopen): read the maps */
	/* A process that exec'd while autoprof ran is exiting: its executable mappings as they
	 * were at the end (struct proc_maps_ev), for the quiet executables (below). */
	PROC_EV_MAPS = 4,
};

/*
 * Quiet executables: files whose processes need nothing of user space at their exec (no trace
 * context, runtime, memory or GPU target; user space decides, src/proc/proctab.c). Their execs
 * do not wake user space: it takes them with the next drain (within 100 ms), and learns such a
 * process only when its samples need it, or, gone by then, from the mappings its exit reports.
 * Under exec churn a wake-up per exec was most of what an exec cost user space.
 */
#define PROC_QUIET_EXES 4096
#define PROC_EXIT_MAPS	16

/* struct proc_ev.flags */
#define PROC_EV_QUIET 0x1 /* PROC_EV_EXEC of a quiet executable: woke nobody */

struct proc_ev_map {
	__u64 start, end, pgoff;
	__u64 ino;
	__u32 dev; /* the kernel's encoding, as exe_dev */
	__u32 pad;
};

/* struct proc_maps_ev.flags */
#define PROC_MAPS_TRUNCATED 0x1 /* more than PROC_EXIT_MAPS: the rest are not reported */
#define PROC_MAPS_TRACECTX  0x2 /* its trace context was published (tracectx_offsets) */

struct proc_maps_ev {
	__u32 type; /* PROC_EV_MAPS */
	__u32 pid;
	__u64 time_ns;
	__u32 nr;    /* executable file mappings in maps[], in address order */
	__u32 flags; /* PROC_MAPS_* */
	struct proc_ev_map maps[PROC_EXIT_MAPS];
};

/* The names whose dlsym reports changed mappings: prefixes of at most 7 bytes, in the
 * `dlsym_names` array (an empty one ends the list). */
#define PROC_DLSYM_NAMES 8
#define PROC_DLSYM_NAME_LEN 8

/* Forked children whose parent is kept for user space (bpf/proc.bpf.c, fork_parents): the
 * latest forks that did not exec, looked up within a few ms of a child's first samples; 4,096
 * are seconds of a fork storm, and 320 KB of preallocated LRU entries (8,192 took 656 KB). */
#define PROC_FORK_PARENTS 4096

/* A process's dlsym reports changed mappings at most once this often (bpf/proc.bpf.c). */
#define PROC_DLSYM_GATE_NS 50000000ULL

struct proc_ev {
	__u32 type;
	__u32 pid;
	__u64 time_ns;
	/* PROC_EV_EXEC: the executable's inode and device (the kernel's encoding, major << 20 |
	 * minor): its line in /proc/PID/maps names it, with no readlink of /proc/PID/exe. */
	__u64 exe_ino;
	__u32 exe_dev;
	/* PROC_EV_EXEC: the process it was forked from (not vfork) while autoprof ran, with no exec
	 * since: the image it ran until now was that one's. 0: not known. */
	__u32 forked_from;
	char comm[16];
	/* PROC_EV_EXEC: the process's cgroups, one in each hierarchy, as one key (never 0), and
	 * the count of tasks moved between cgroups then (proc.bpf.c's cgroup_moves): user space
	 * keeps the container ID by it (src/proc/container.c). */
	__u64 cgroup_key;
	__u64 cgroup_moves;
	/* PROC_EV_EXEC: the executable's change time (as struct unwind_inode has it): with its
	 * inode, the key of the quiet executables. */
	__s64 exe_ctime_ns;
	__u32 flags; /* PROC_EV_QUIET */
	__u32 pad;
};

/*
 * Samples of a process image that wake user space at once: enough for the dynamic loader to
 * have mapped the libraries by the last of them, so the maps are read while the process lives.
 */
#define PROC_WAKE_SAMPLES 3

enum proc_counter {
	PROC_CNT_EXEC = 0,
	PROC_CNT_EXIT,
	PROC_CNT_DROP_RINGBUF,
	PROC_CNT_EXEC_TABLES,  /* executables' text published for walks at exec */
	PROC_CNT_MAPPED,       /* dlsym calls with mappings changed since the last */
	PROC_CNT_FORK_TABLES,  /* forked children given their parent's mapping table */
	PROC_CNT_QUIET_EXECS,  /* execs of quiet executables (no wake-up) */
	PROC_CNT_EXIT_MAPS,    /* exits that reported their mappings */
	PROC_CNT_START_TABLES, /* exec tables published again at __libc_start_main */
	PROC_CNT_EXIT_MAPS_UNSAID, /* quiet exits never sampled: nothing to name, not reported */
	PROC_CNT__MAX,
};

#endif
