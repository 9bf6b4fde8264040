// SPDX-License-Identifier: GPL-2.0-only
/* autoprof's own health in /metrics: one table-free callback per subsystem's stats. */
#include <stdio.h>

#include <bpf/libbpf.h>

#include "collect/offcpu.h"
#include "collect/jvm.h"
#include "collect/memory.h"
#include "collect/oncpu.h"
#include "bpf/memory.h"
#include "collect/proc.h"
#include "collect/proccpu.h"
#include "collect/python.h"
#include "daemon.h"
#include "lib/metrics.h"
#include "store/store.h"
#include "symbolize/proctab.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"
#include "bpf/unwind.h"

#define NSEC 1e9

static void build_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	char libbpf[32];

	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(), libbpf_minor_version());
	metrics__family(w, "autoprof_build_info", METRIC_GAUGE,
			"autoprof's version, commit and libbpf version (always 1)");
	metrics__sample(w, 1, "version", AUTOPROF_VERSION, "commit", AUTOPROF_COMMIT, "libbpf",
			libbpf, NULL);
	metrics__family(w, "autoprof_profile_frequency_hertz", METRIC_GAUGE,
			"On-CPU sampling frequency per CPU");
	metrics__sample(w, d->cfg.profile_frequency, NULL);
}

static void oncpu_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct offcpu_stats off;
	struct oncpu_stats s;

	if (!d->oncpu)
		return;
	oncpu__stats(d->oncpu, &s);
	if (d->offcpu)
		offcpu__stats(d->offcpu, &off);
	metrics__family(w, "autoprof_samples", METRIC_COUNTER,
			"Samples taken by the BPF collectors and sent to user space");
	metrics__sample(w, s.samples, "profile", "cpu", NULL);
	metrics__family(w, "autoprof_samples_stored", METRIC_COUNTER,
			"Samples aggregated into the store");
	metrics__sample(w, s.ingested, "profile", "cpu", NULL);
	metrics__family(w, "autoprof_samples_dropped", METRIC_COUNTER,
			"Samples lost, by reason: ringbuf_full (BPF could not hand it over), "
			"store_memory (store over its memory limit), malformed");
	metrics__sample(w, s.drop_ringbuf, "profile", "cpu", "reason", "ringbuf_full", NULL);
	metrics__sample(w, s.drop_store, "profile", "cpu", "reason", "store_memory", NULL);
	metrics__sample(w, s.drop_malformed, "profile", "cpu", "reason", "malformed", NULL);
	metrics__family(w, "autoprof_samples_idle", METRIC_COUNTER,
			"Samples of idle CPUs, not recorded");
	metrics__sample(w, s.idle, "profile", "cpu", NULL);
	metrics__family(w, "autoprof_stack_errors", METRIC_COUNTER,
			"Samples whose kernel or user stack could not be read (kept without it)");
	metrics__sample(w, s.kstack_errors, "profile", "cpu", "stack", "kernel", NULL);
	metrics__sample(w, s.ustack_errors, "profile", "cpu", "stack", "user", NULL);
	metrics__family(w, "autoprof_stacks_truncated", METRIC_COUNTER,
			"Samples whose user stack was deeper than the walk (127 frames); other "
			"truncations of table walks: autoprof_unwind_stacks_total");
	metrics__sample(w, s.ustack_truncated, "profile", "cpu", NULL);
	/* The readiness signal clients wait for: absent until samples are ingested (main.c). */
	if (__atomic_load_n(&d->ingesting, __ATOMIC_ACQUIRE)) {
		metrics__family(w, "autoprof_cpus_sampled", METRIC_GAUGE,
				"CPUs with an attached sampler, once its samples are ingested");
		metrics__sample(w, s.cpus, NULL);
	}
	metrics__family(w, "autoprof_bpf_ringbuf_used_bytes", METRIC_GAUGE,
			"Bytes waiting in a BPF ring buffer");
	metrics__sample(w, s.ringbuf_used, "ring", "oncpu", NULL);
	if (d->offcpu)
		metrics__sample(w, off.ringbuf_used, "ring", "offcpu", NULL);
	metrics__family(w, "autoprof_bpf_ringbuf_size_bytes", METRIC_GAUGE,
			"Size of a BPF ring buffer");
	metrics__sample(w, s.ringbuf_size, "ring", "oncpu", NULL);
	if (d->offcpu)
		metrics__sample(w, off.ringbuf_size, "ring", "offcpu", NULL);
}

static void offcpu_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct offcpu_stats s;

	metrics__family(w, "autoprof_offcpu_enabled", METRIC_GAUGE,
			"Whether off-CPU spans are recorded (offcpu.enabled, changeable at run time)");
	if (!d->offcpu) {
		metrics__sample(w, 0, NULL);
		return;
	}
	offcpu__stats(d->offcpu, &s);
	metrics__sample(w, s.settings.enabled, NULL);
	metrics__family(w, "autoprof_offcpu_min_block_seconds", METRIC_GAUGE,
			"Shortest off-CPU span recorded (offcpu.min-block)");
	metrics__sample(w, s.settings.min_block_ns / NSEC, NULL);
	metrics__family(w, "autoprof_offcpu_sample_probability", METRIC_GAUGE,
			"Fraction of off-CPU spans recorded (offcpu.sample-probability)");
	metrics__sample(w, s.settings.sample_ppm / 1e6, NULL);
	metrics__family(w, "autoprof_offcpu_spans", METRIC_COUNTER,
			"Off-CPU spans that passed the filters in BPF and were sent to user space");
	metrics__sample(w, s.spans, NULL);
	metrics__family(w, "autoprof_offcpu_spans_stored", METRIC_COUNTER,
			"Off-CPU spans joined with their user stack and aggregated into the store");
	metrics__sample(w, s.ingested, NULL);
	metrics__family(w, "autoprof_offcpu_spans_filtered", METRIC_COUNTER,
			"Off-CPU spans not recorded, by reason: short (below offcpu.min-block), "
			"long (over one hour), sampled_out (offcpu.sample-probability), "
			"no_user_stack (no user frame, e.g. the thread exited in the kernel)");
	metrics__sample(w, s.filter_short, "reason", "short", NULL);
	metrics__sample(w, s.filter_long, "reason", "long", NULL);
	metrics__sample(w, s.filter_sampled, "reason", "sampled_out", NULL);
	metrics__sample(w, s.filter_no_user, "reason", "no_user_stack", NULL);
	metrics__family(w, "autoprof_offcpu_spans_dropped", METRIC_COUNTER,
			"Off-CPU spans lost, by reason: map_full (too many threads blocked at "
			"once), ringbuf_full, task_work (the user stack could not be scheduled), "
			"unjoined (no user stack came), store_memory, malformed");
	metrics__sample(w, s.drop_map_full, "reason", "map_full", NULL);
	metrics__sample(w, s.drop_ringbuf, "reason", "ringbuf_full", NULL);
	metrics__sample(w, s.drop_task_work, "reason", "task_work", NULL);
	metrics__sample(w, s.drop_unjoined, "reason", "unjoined", NULL);
	metrics__sample(w, s.drop_store, "reason", "store_memory", NULL);
	metrics__sample(w, s.drop_malformed, "reason", "malformed", NULL);
	metrics__family(w, "autoprof_offcpu_stack_errors", METRIC_COUNTER,
			"Off-CPU spans whose kernel or user stack could not be read, and user stacks "
			"deeper than the BPF walk (127 frames)");
	metrics__sample(w, s.kstack_errors, "stack", "kernel", NULL);
	metrics__sample(w, s.ustack_errors, "stack", "user", NULL);
	metrics__sample(w, s.ustack_truncated, "stack", "user_truncated", NULL);
	metrics__family(w, "autoprof_offcpu_spans_waiting", METRIC_GAUGE,
			"Off-CPU spans held in user space until their thread returns to user space");
	metrics__sample(w, s.waiting, NULL);
}

static void store_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct store_stats s;

	store__stats(d->ctx.store, &s);
	metrics__family(w, "autoprof_store_stacks", METRIC_GAUGE, "Unique stacks held");
	metrics__sample(w, s.stacks, NULL);
	metrics__family(w, "autoprof_store_frames", METRIC_GAUGE, "Frames held by unique stacks");
	metrics__sample(w, s.frames, NULL);
	metrics__family(w, "autoprof_store_rows", METRIC_GAUGE,
			"Aggregated (stack, thread) rows held across time slots");
	metrics__sample(w, s.rows, NULL);
	metrics__family(w, "autoprof_store_slots", METRIC_GAUGE, "One-second time slots held");
	metrics__sample(w, s.slots, NULL);
	metrics__family(w, "autoprof_store_memory_bytes", METRIC_GAUGE, "Bytes the store holds");
	metrics__sample(w, s.bytes, NULL);
	metrics__family(w, "autoprof_store_memory_limit_bytes", METRIC_GAUGE,
			"The store's memory limit (store.memory-limit)");
	metrics__sample(w, d->cfg.store_memory_limit, NULL);
	metrics__family(w, "autoprof_store_retention_seconds", METRIC_GAUGE,
			"How far back profiles reach (profile.retention)");
	metrics__sample(w, d->cfg.profile_retention_ns / NSEC, NULL);
	metrics__family(w, "autoprof_store_slots_evicted", METRIC_COUNTER,
			"Time slots dropped before their retention to stay under the memory limit");
	metrics__sample(w, s.slots_evicted_memory, NULL);
	metrics__family(w, "autoprof_store_samples_late", METRIC_COUNTER,
			"Samples that arrived after their time slot was recycled");
	metrics__sample(w, s.samples_too_old, NULL);
}

static void proc_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct proctab_stats s;
	struct proc_collector_stats ps = { 0 };

	proctab__stats(d->ctx.proctab, &s);
	if (d->procs)
		proc_collector__stats(d->procs, &ps);
	metrics__family(w, "autoprof_processes_tracked", METRIC_GAUGE,
			"Processes whose mappings autoprof holds");
	metrics__sample(w, s.processes, NULL);
	metrics__family(w, "autoprof_process_events", METRIC_COUNTER,
			"Process exec and exit events seen");
	metrics__sample(w, ps.execs, "event", "exec", NULL);
	metrics__sample(w, ps.exits, "event", "exit", NULL);
	metrics__family(w, "autoprof_process_events_dropped", METRIC_COUNTER,
			"Process events lost to a full ring buffer");
	metrics__sample(w, ps.dropped, NULL);
	metrics__family(w, "autoprof_maps_reads", METRIC_COUNTER,
			"Reads of /proc/PID/maps, by result (gone: the process exited first)");
	metrics__sample(w, s.maps_reads - s.maps_gone - s.maps_errors, "result", "ok", NULL);
	metrics__sample(w, s.maps_gone, "result", "gone", NULL);
	metrics__sample(w, s.maps_errors, "result", "error", NULL);
	metrics__family(w, "autoprof_frames_unmapped", METRIC_COUNTER,
			"User addresses outside every known mapping of their process");
	metrics__sample(w, s.frames_unmapped, NULL);
	metrics__family(w, "autoprof_process_context_reads", METRIC_COUNTER,
			"Reads of a process's OpenTelemetry process context (OTEL_CTX), by result");
	metrics__sample(w, s.ctx_reads - s.ctx_gone - s.ctx_errors, "result", "ok", NULL);
	metrics__sample(w, s.ctx_gone, "result", "gone", NULL);
	metrics__sample(w, s.ctx_errors, "result", "error", NULL);
}

static void symbolizer_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct symbolizer_stats s;

	symbolizer__stats(d->ctx.sym, &s);
	metrics__family(w, "autoprof_symbolizer_lookups", METRIC_COUNTER,
			"Frames symbolized, by result: hit (named), miss (no symbol covers it), "
			"failure (its object could not be read)");
	metrics__sample(w, s.lookups_hit, "result", "hit", NULL);
	metrics__sample(w, s.lookups_miss, "result", "miss", NULL);
	metrics__sample(w, s.lookups_failed, "result", "failure", NULL);
	metrics__family(w, "autoprof_symbolizer_loads", METRIC_COUNTER,
			"Symbol sources loaded, by result: ok, unreadable (the file could not be "
			"opened while mapped), not_elf, error");
	metrics__sample(w, s.loads - s.load_errors, "result", "ok", NULL);
	metrics__sample(w, s.load_errors_unreadable, "result", "unreadable", NULL);
	metrics__sample(w, s.load_errors_not_elf, "result", "not_elf", NULL);
	metrics__sample(w, s.load_errors - s.load_errors_unreadable - s.load_errors_not_elf,
			"result", "error", NULL);
	metrics__family(w, "autoprof_symbolizer_open_errors", METRIC_COUNTER,
			"Mapped files that could not be opened (process gone, permissions)");
	metrics__sample(w, s.open_errors, NULL);
	metrics__family(w, "autoprof_symbolizer_evictions", METRIC_COUNTER,
			"Symbol tables dropped to stay within symbolizer.cache-size");
	metrics__sample(w, s.evictions, NULL);
	metrics__family(w, "autoprof_symbolizer_cache_bytes", METRIC_GAUGE,
			"Bytes held by loaded symbol tables");
	metrics__sample(w, s.bytes, NULL);
	metrics__family(w, "autoprof_symbolizer_objects", METRIC_GAUGE,
			"Executables and libraries known to the symbolizer");
	metrics__sample(w, s.dsos, NULL);
}

/* How table walks of user stacks ended: a BPF counter each. */
static const struct {
	enum unwind_counter counter;
	const char *result;
} unwind_results[] = {
	{ UNWIND_CNT_COMPLETE, "complete" },
	{ UNWIND_CNT_TRUNC_DEPTH, "truncated_depth" },
	{ UNWIND_CNT_TRUNC_READ, "truncated_read" },
	{ UNWIND_CNT_TRUNC_RULE, "truncated_rule" },
	{ UNWIND_CNT_TRUNC_NOINFO, "truncated_noinfo" },
};

static void unwind_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct unwinder_stats s;

	if (!d->ctx.unwinder)
		return;
	unwinder__stats(d->ctx.unwinder, &s);
	metrics__family(w, "autoprof_unwind_stacks", METRIC_COUNTER,
			"User stacks walked by unwind tables, by how the walk ended: complete "
			"(reached the outermost frame) or truncated_* (depth: over 127 frames; read: "
			"stack memory unreadable; rule: an unwind rule BPF cannot follow; noinfo: "
			"a frame with neither unwind info nor frame pointer)");
	for (size_t i = 0; i < sizeof(unwind_results) / sizeof(unwind_results[0]); i++)
		metrics__sample(w, s.bpf[unwind_results[i].counter], "result",
				unwind_results[i].result, NULL);
	metrics__family(w, "autoprof_unwind_stacks_fp_only", METRIC_COUNTER,
			"User stacks walked by frame pointers because their process had no "
			"mapping table yet (its first samples)");
	metrics__sample(w, s.bpf[UNWIND_CNT_NO_PROC], NULL);
	metrics__family(w, "autoprof_unwind_frames", METRIC_COUNTER,
			"User frames unwound, by method: table (an .eh_frame row) or fp (frame "
			"pointer: JIT code, Go, files without unwind info)");
	metrics__sample(w, s.bpf[UNWIND_CNT_FRAMES_TABLE], "method", "table", NULL);
	metrics__sample(w, s.bpf[UNWIND_CNT_FRAMES_FP], "method", "fp", NULL);
	metrics__family(w, "autoprof_unwind_frames_cached", METRIC_COUNTER,
			"User frames of autoprof_unwind_frames whose rule came from the walk cache "
			"(a stack seen recently, checked frame by frame) instead of the tables");
	metrics__sample(w, s.bpf[UNWIND_CNT_FRAMES_CACHED], NULL);
	metrics__family(w, "autoprof_unwind_mapping_misses", METRIC_COUNTER,
			"Stacks with a pc outside their process's known mappings (read again)");
	metrics__sample(w, s.bpf[UNWIND_CNT_MAPPING_MISS], NULL);
	metrics__family(w, "autoprof_unwind_table_bytes", METRIC_GAUGE,
			"Bytes of unwind table rows loaded into BPF");
	metrics__sample(w, s.row_bytes, NULL);
	metrics__family(w, "autoprof_unwind_table_capacity_bytes", METRIC_GAUGE,
			"Bytes of unwind table rows BPF can hold (unwind.memory-limit)");
	metrics__sample(w, s.capacity_bytes, NULL);
	metrics__family(w, "autoprof_unwind_files", METRIC_GAUGE,
			"Executables and libraries with an unwind table loaded");
	metrics__sample(w, s.files, NULL);
	metrics__family(w, "autoprof_unwind_processes", METRIC_GAUGE,
			"Processes with a mapping table in BPF");
	metrics__sample(w, s.processes, NULL);
	metrics__family(w, "autoprof_unwind_table_builds", METRIC_COUNTER,
			"Unwind tables built from files, by result (error: unwind info unreadable)");
	metrics__sample(w, s.builds, "result", "ok", NULL);
	metrics__sample(w, s.build_errors, "result", "error", NULL);
	metrics__family(w, "autoprof_unwind_table_build_seconds", METRIC_COUNTER,
			"Time spent building unwind tables");
	metrics__sample(w, s.build_ns / NSEC, NULL);
	metrics__family(w, "autoprof_unwind_table_evictions", METRIC_COUNTER,
			"Unwind tables dropped to stay within unwind.memory-limit");
	metrics__sample(w, s.evictions, NULL);
	metrics__family(w, "autoprof_unwind_tables_too_big", METRIC_COUNTER,
			"Files whose unwind table alone exceeds unwind.memory-limit");
	metrics__sample(w, s.too_big, NULL);
	metrics__family(w, "autoprof_unwind_mappings_truncated", METRIC_COUNTER,
			"Process mapping tables cut at 256 executable mappings");
	metrics__sample(w, s.maps_truncated, NULL);
	metrics__family(w, "autoprof_unwind_update_errors", METRIC_COUNTER,
			"BPF map updates of unwind tables that failed");
	metrics__sample(w, s.update_errors, NULL);
}

static void memory_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct memory_stats s;

	if (!d->memory)
		return;
	memory__stats(d->memory, &s);
	metrics__family(w, "autoprof_memory_targets", METRIC_GAUGE,
			"Memory profiling targets (memory.targets and the API)");
	metrics__sample(w, s.targets, NULL);
	metrics__family(w, "autoprof_memory_processes", METRIC_GAUGE,
			"Processes matched by a memory target, by state: attached (allocator "
			"probed) or pending (waiting for its allocator to be mapped)");
	metrics__sample(w, s.procs_attached, "state", "attached", NULL);
	metrics__sample(w, s.procs_pending, "state", "pending", NULL);
	metrics__family(w, "autoprof_memory_preload_processes", METRIC_GAUGE,
			"Attached processes profiled through the preload shim (its ring read, "
			"the allocator not probed)");
	metrics__sample(w, s.procs_preload, NULL);
	metrics__family(w, "autoprof_memory_go_processes", METRIC_GAUGE,
			"Attached Go processes profiled through the runtime's sampled path "
			"(runtime.mProf_Malloc, runtime.freeSpecial)");
	metrics__sample(w, s.procs_go, NULL);
	metrics__family(w, "autoprof_memory_live_allocations", METRIC_GAUGE,
			"Live sampled allocations held for the heap profile");
	metrics__sample(w, s.live, NULL);
	metrics__family(w, "autoprof_memory_live_bytes", METRIC_GAUGE,
			"Live bytes the held samples stand for (estimated)");
	metrics__sample(w, s.live_bytes, NULL);
	metrics__family(w, "autoprof_memory_calls", METRIC_COUNTER,
			"Allocator calls seen by the probes, by kind: alloc (of which sampled and "
			"nested: inside another probed call), free (of which of a sampled block)");
	metrics__sample(w, s.bpf[MEMORY_CNT_CALLS], "call", "alloc", NULL);
	metrics__sample(w, s.bpf[MEMORY_CNT_SAMPLED], "call", "alloc_sampled", NULL);
	metrics__sample(w, s.bpf[MEMORY_CNT_NESTED], "call", "alloc_nested", NULL);
	metrics__sample(w, s.bpf[MEMORY_CNT_FREES], "call", "free", NULL);
	metrics__sample(w, s.bpf[MEMORY_CNT_FREES_SAMPLED], "call", "free_sampled", NULL);
	metrics__family(w, "autoprof_memory_samples_stored", METRIC_COUNTER,
			"Sampled allocations aggregated into the store (allocs)");
	metrics__sample(w, s.ingested, NULL);
	metrics__family(w, "autoprof_memory_dropped", METRIC_COUNTER,
			"Memory samples lost or untracked, by reason: live_full (live table full: "
			"in allocs, not in heap), ringbuf_full, store_memory, malformed, "
			"preload_ring_full (records a preload shim could not write), "
			"preload_malformed (a shim's ring skipped to its head)");
	metrics__sample(w, s.bpf[MEMORY_CNT_DROP_LIVE_FULL], "reason", "live_full", NULL);
	metrics__sample(w, s.bpf[MEMORY_CNT_DROP_RINGBUF], "reason", "ringbuf_full", NULL);
	metrics__sample(w, s.drop_store, "reason", "store_memory", NULL);
	metrics__sample(w, s.drop_malformed, "reason", "malformed", NULL);
	metrics__sample(w, s.preload.dropped, "reason", "preload_ring_full", NULL);
	metrics__sample(w, s.preload.malformed, "reason", "preload_malformed", NULL);
	metrics__family(w, "autoprof_memory_preload_ring_bytes", METRIC_COUNTER,
			"Bytes of sampled allocations (with their stack copies) and frees read "
			"from preload shims' rings");
	metrics__sample(w, s.preload.bytes, NULL);
	metrics__family(w, "autoprof_memory_preload_stacks_cut", METRIC_COUNTER,
			"Preload samples whose stack copy was cut at the shim's "
			"AUTOPROF_PRELOAD_STACK_MAX (their stacks end truncated)");
	metrics__sample(w, s.preload.stack_cut, NULL);
	metrics__family(w, "autoprof_memory_attaches", METRIC_COUNTER,
			"Target processes whose allocator was probed (ok) or could not be (failed)");
	metrics__sample(w, s.attach_ok, "result", "ok", NULL);
	metrics__sample(w, s.attach_failed, "result", "failed", NULL);
	metrics__family(w, "autoprof_memory_probes", METRIC_COUNTER,
			"Allocator probes placed, by instruction: emulated (cheap) or entry "
			"(single-stepped, ~20x the cost)");
	metrics__sample(w, s.probes_emulated, "placement", "emulated", NULL);
	metrics__sample(w, s.probes_entry, "placement", "entry", NULL);
}

static void jvm_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct jvm_stats s;

	if (!d->jvm)
		return;
	jvm__stats(d->jvm, &s);
	metrics__family(w, "autoprof_jvm_processes", METRIC_GAUGE,
			"Live HotSpot JVMs whose samples hit JIT code");
	metrics__sample(w, s.processes, NULL);
	metrics__family(w, "autoprof_jvm_perf_map_requests", METRIC_COUNTER,
			"Perf maps asked of JVMs through the attach API (jcmd Compiler.perfmap), by "
			"result: ok, failed (no listener, -Xrs, timeout), skipped (a map autoprof did "
			"not cause was there)");
	metrics__sample(w, s.requests_ok, "result", "ok", NULL);
	metrics__sample(w, s.requests_failed, "result", "failed", NULL);
	metrics__sample(w, s.requests_skipped, "result", "skipped", NULL);
	metrics__family(w, "autoprof_jvm_perf_maps_removed", METRIC_COUNTER,
			"Perf maps autoprof caused, removed when their JVM exited");
	metrics__sample(w, s.maps_removed, NULL);
	metrics__family(w, "autoprof_jvm_stacks_cut", METRIC_COUNTER,
			"JVM stacks cut after the first JIT frame because the JVM keeps no frame "
			"pointers (-XX:-PreserveFramePointer) or has not said yet");
	metrics__sample(w, s.stacks_cut, NULL);
}

static void python_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct symbolizer_stats sym;
	struct python_stats s;

	python__stats(d->ctx.python, &s);
	symbolizer__stats(d->ctx.sym, &sym);
	metrics__family(w, "autoprof_interpreted_positions", METRIC_GAUGE,
			"Distinct (function, file, line) of interpreted frames held for naming "
			"(kept for autoprof's lifetime, at most 262144)");
	metrics__sample(w, sym.interp_frames, NULL);
	metrics__family(w, "autoprof_python_processes", METRIC_COUNTER,
			"CPython processes found, by result: supported (Python frames), "
			"unknown_version (native frames only), error (its binary unreadable)");
	metrics__sample(w, s.supported, "result", "supported", NULL);
	metrics__sample(w, s.unknown_version, "result", "unknown_version", NULL);
	metrics__sample(w, s.errors, "result", "error", NULL);
	metrics__family(w, "autoprof_python_samples", METRIC_COUNTER,
			"Samples with Python frames");
	metrics__sample(w, s.samples, NULL);
	metrics__family(w, "autoprof_python_frames", METRIC_COUNTER,
			"Python frames named in samples");
	metrics__sample(w, s.frames, NULL);
	metrics__family(w, "autoprof_python_errors", METRIC_COUNTER,
			"Python frames left native, by reason: code_unreadable (its code object "
			"could not be read: mostly a process that exited before its samples were "
			"drained), mismatch (a complete native stack whose "
			"evaluation-loop frames and Python frame groups disagree)");
	metrics__sample(w, s.code_errors, "reason", "code_unreadable", NULL);
	metrics__sample(w, s.mismatches, "reason", "mismatch", NULL);
}

int selfmetrics__register(struct daemon *d)
{
	static const metrics_fn fns[] = {
		build_metrics, oncpu_metrics, offcpu_metrics, store_metrics, proc_metrics,
		symbolizer_metrics, unwind_metrics, memory_metrics, jvm_metrics,
		python_metrics,
	};
	int err;

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		err = metrics__register(fns[i], d);
		if (err)
			return err;
	}
	err = metrics__register(proccpu__metrics, d->ctx.cpu);
	if (err)
		return err;
	err = otlp_daemon__register_metrics(d);
	if (err)
		return err;
	return metrics__register_process();
}
