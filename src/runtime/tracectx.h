/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_RUNTIME_TRACECTX_H
#define AUTOPROF_RUNTIME_TRACECTX_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/tracectx_abi.h"

/*
 * Thread trace context (OTEP 4947): a process publishes the span each thread is running in a
 * thread-local pointer named otel_thread_ctx_v1. The samplers read it at fsbase + tp offset
 * (bpf/tracectx.bpf.h); this finds that offset.
 *
 * Supported on x86-64 with glibc's static TLS:
 *  - the variable defined in the main executable (local-exec / initial-exec): the offset
 *    follows from the executable's PT_TLS the way glibc lays out the first TLS block;
 *  - the variable defined in a shared library linked at start that reaches it through a
 *    TLSDESC GOT pair (-mtls-dialect=gnu2, R_X86_64_TLSDESC) or an initial-exec GOT entry
 *    (R_X86_64_TPOFF64): the offset is read from the process's GOT, where ld.so resolved it.
 * Not supported (-ENOTSUP): a library whose variable is in dynamic TLS (dlopen'ed after start:
 * its TLSDESC holds a pointer), one that only uses general-dynamic __tls_get_addr relocations
 * (no offset is stored anywhere readable), and programs started through an explicit ld.so.
 */

/*
 * Two other sources of the same ids, used when a process has no OTEP variable:
 *  - Go pprof labels trace_id/span_id (src/runtime/golabels.h) of a Go executable: the g slot's
 *    offset from the thread pointer and the runtime's struct offsets (TRACECTX_GO_MAP);
 *  - Elastic APM's elastic_apm_profiling_correlation_tls_v1 in a library named
 *    elastic-jvmti-linux-*.so, found like the OTEP variable (TRACECTX_ELASTIC).
 */

/*
 * Finds where pid's threads publish their span: otel_thread_ctx_v1 in the executable or a
 * shared library (kind TRACECTX_OTEP), else Go labels, else Elastic's variable. loc->tp_offset
 * is the same for every thread of the process. 0, -ENOENT (the process publishes none),
 * -ENOTSUP (in dynamic TLS, e.g. dlopen'ed late; a Go release whose labels are not read), or
 * another negative errno.
 */
int tracectx__locate(int pid, struct tracectx_loc *loc);

/*
 * What each file tells about trace contexts (its variables' offsets and GOT slots, whether it is
 * a Go executable and the runtime's offsets), kept per file: (device, inode, change time, size)
 * as its dso was opened, so a file rewritten in place is read again. At most max_entries files,
 * the least recently used making room. Thread-safe.
 */
struct tracectx_cache;
struct tracectx_cache_stats {
	uint64_t entries, max_entries;
	uint64_t hits, misses, evictions;
};
struct tracectx_cache *tracectx_cache__new(unsigned int max_entries);
void tracectx_cache__free(struct tracectx_cache *c); /* accepts NULL */
void tracectx_cache__stats(struct tracectx_cache *c, struct tracectx_cache_stats *out);

struct proc_map;
/*
 * As tracectx__locate, from the executable mappings the proctab read (maps, n: the files are
 * their dsos) and the executable's path exe: an exec of a known file costs lookups and, for a
 * variable reached through a GOT, one read of the process's memory.
 */
int tracectx__locate_maps(struct tracectx_cache *c, int pid, const char *exe,
			  const struct proc_map *maps, uint32_t n, struct tracectx_loc *loc);

/* Whether path names Elastic's agent library: .*\/elastic-jvmti-linux-([\w-]*)\.so */
bool tracectx__elastic_path(const char *path);

#endif
