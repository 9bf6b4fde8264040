/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_RUNTIME_JVM_H
#define AUTOPROF_RUNTIME_JVM_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/jvmattach.h"

/*
 * HotSpot JVMs' JIT code by name. When a stack of a JVM (libjvm.so mapped) holds JIT addresses
 * its perf map does not name, the JVM is asked, through the attach API (jvmattach.c) on a thread
 * of its own, to write /tmp/perf-PID.map (jcmd Compiler.perfmap, JDK 17+: the whole code cache,
 * rewritten each time, so bounded by it), at most once per interval (1 s, doubling to 10 s).
 * A JVM whose listener did not start at our SIGQUIT (-XX:+DisableAttachMechanism: it printed a
 * thread dump instead) is never signalled again; one that fails 5 times in a row is left too.
 * The maps it caused are loaded into the process's JIT dso and removed when the JVM exits (or
 * autoprof stops), with the attach socket of a listener it started (a killed JVM leaves it). A
 * map it did not cause, written since the JVM started (an agent's, another profiler's), is left
 * to its writer (looked at again at later misses); an older one, left by an earlier process
 * with the same pid, is taken over.
 * A JVM that keeps no frame pointers (-XX:-PreserveFramePointer, the default; asked once with
 * printflag) cannot be walked past its compiled frames: its stacks are cut after the first JIT
 * frame and marked [truncated] instead of naming callers from a stale frame pointer. Any JVM
 * stack that ends in JIT code is marked [truncated]: a Java thread starts in native code.
 */
struct jvm;
struct dso;
struct frame;
struct symbolizer;

struct unwinder;
/* Starts the attach thread; unwinder (NULL: none) learns where each JVM's interpreter is, so
 * that interpreted frames are named by their methods. Returns NULL with *err set. */
struct jvm *jvm__new(struct symbolizer *sym, struct unwinder *unwinder, int *err);
/* Stops the thread and removes the perf maps it caused that are still there. Accepts NULL. */
void jvm__free(struct jvm *j);

/*
 * For the proctab (ingest thread): frames (n) of JVM pid, jit its JIT dso. Asks for a perf map
 * when a JIT frame is not in the last one read; returns how many frames to keep, *cut set when
 * fewer (the caller marks the stack truncated).
 */
uint32_t jvm__frames(void *j, uint32_t pid, struct dso *jit, struct frame *frames, uint32_t n,
		     bool *cut, uint64_t now_ns);
/* The process exited (ingest thread): its map is handed to its JIT dso, then removed. */
void jvm__exit(struct jvm *j, uint32_t pid);
struct proctab;
/* Listens to processes' lives (proc/proctab.h): names JIT frames, hears exits. */
int jvm__observe(struct jvm *j, struct proctab *pt);

struct jvm_stats {
	uint64_t processes;	   /* JVMs seen with JIT frames, alive */
	uint64_t requests_ok;	   /* perf maps written at our request */
	uint64_t requests_failed;  /* attach or command failed (JVM without a listener, -Xrs...) */
	uint64_t requests_skipped; /* another writer's map was there: left to it */
	uint64_t maps_removed;	   /* maps we caused, removed at exit */
	uint64_t stacks_cut;	   /* stacks cut after a JIT frame (no frame pointers) */
	uint64_t methods_unnamed;  /* interpreted frames whose method could not be read */
	uint64_t attach[JVMATTACH_NR]; /* attach API calls, by how they ended */
};
void jvm__stats(struct jvm *j, struct jvm_stats *out);

#endif
