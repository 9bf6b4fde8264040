/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_SAMPLE_PROC_H
#define AUTOPROF_SAMPLE_PROC_H

#include "collect/collect.h"

struct proctab;

/* Process life cycle (exec, exit) into the process table, for every profile type. */
struct proc_collector;

struct proc_collector_stats {
	unsigned long long execs;
	unsigned long long exits;
	unsigned long long dropped; /* events lost to a full ring buffer */
	unsigned long long exec_tables; /* executables' text published at exec (proc.bpf.c) */
	unsigned long long fork_tables; /* forked children given their parent's table */
	unsigned long long relearned;	/* maps read again once the loader mapped libraries */
	unsigned long long mapped;	/* maps read again: dlsym after a dlopen */
	unsigned long long dlopen_libs;	  /* C library files looked at for dlsym (failed ones too) */
	unsigned long long dlopen_failed; /* ... whose dlsym could not be probed */
	unsigned long long quiet_execs;	  /* execs of quiet executables (no wake-up, nothing read) */
	unsigned long long exit_maps;	  /* exits that reported their mappings */
	unsigned long long exit_maps_unsaid; /* quiet exits never sampled: nothing reported */
	unsigned long long start_tables;  /* exec tables published again at __libc_start_main */
	unsigned long long quiet_exes;	  /* quiet executables now */
	unsigned long long unquieted;	  /* executables no longer quiet: a process needed more */
};

/* Loads and attaches bpf/proc.bpf.c. Returns NULL with *err set. */
struct proc_collector *proc_collector__new(struct collect_ctx *ctx, int *err);
/*
 * From now on, a process that loaded a library with dlopen has its maps read again when it next
 * looks up a symbol whose name starts with one of names (NULL-terminated, at most 8 prefixes of
 * at most 7 bytes: -E2BIG), how a program reaches the library's code, so that the observers of
 * processes see a library loaded long after exec (CUDA): the entry of dlsym in the C library of
 * each process learned is probed, once per file, for every process that maps it.
 */
int proc_collector__watch_dlopen(struct proc_collector *pc, const char *const *names);
void proc_collector__free(struct proc_collector *pc); /* accepts NULL */
/*
 * Exits are applied after the samples already in flight were ingested: the ingest loop calls
 * this after draining every ring, and an exit takes effect at the drain after the one that saw
 * it, so a process's last samples (even those taken while it exits) still find its mappings.
 */
void proc_collector__reap(struct proc_collector *pc);
/* Reads again the maps of processes exec'd each of relearn_ns ago (proc.c); returns the ms
 * until the next is due, at most max_ms: the ingest loop's poll timeout. */
int proc_collector__relearn(struct proc_collector *pc, unsigned long long now, int max_ms);
void proc_collector__stats(struct proc_collector *pc, struct proc_collector_stats *out);

#endif
