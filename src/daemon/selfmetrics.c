// SPDX-License-Identifier: GPL-2.0-only
/* autoprof's own health in /metrics: a callback and a table of families per subsystem's stats. */
#include <stdio.h>

#include <bpf/libbpf.h>

#include "sample/offcpu.h"
#include "runtime/jvm.h"
#include "memory/memory.h"
#include "gpu/gpumem.h"
#include "history/history.h"
#include "bpf/gpumem_abi.h"
#include "sample/oncpu.h"
#include "bpf/memory_abi.h"
#include "sample/proc.h"
#include "sample/proccpu.h"
#include "runtime/lua.h"
#include "runtime/python.h"
#include "runtime/tracectx.h"
#include "daemon/daemon.h"
#include "daemon/webui.h"
#include "lib/metrics.h"
#include "lib/timeconst.h"
#include "lib/ufile.h"
#include "store/store.h"
#include "proc/container.h"
#include "proc/proctab.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"
#include "bpf/unwind_abi.h"

/*
 * Each callback reads its subsystem's stats into a struct and writes the families from a static
 * const table of it (metrics__table). Values the stats do not hold as such (differences, config
 * values) are put in a small view struct beside them. What stays written out by hand says why.
 */

static const struct metrics_row frequency_rows[] = {
	METRICS_FAMILY("autoprof_profile_frequency_hertz", METRIC_GAUGE,
		       "On-CPU sampling frequency per CPU"),
	METRICS_SAMPLE(struct daemon, cfg.profile_frequency),
};

static void build_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	char libbpf[32];

	/* By hand: its label values are strings, not fields. */
	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(), libbpf_minor_version());
	metrics__family(w, "autoprof_build_info", METRIC_GAUGE,
			"autoprof's version, commit and libbpf version (always 1)");
	metrics__sample(w, 1, "version", AUTOPROF_VERSION, "commit", AUTOPROF_COMMIT, "libbpf",
			libbpf, NULL);
	METRICS_TABLE(w, frequency_rows, d);
}

static const struct metrics_row oncpu_rows[] = {
	METRICS_FAMILY("autoprof_samples", METRIC_COUNTER,
		       "Samples taken by the BPF collectors and sent to user space"),
	METRICS_SAMPLE(struct oncpu_stats, samples, "profile", "cpu"),
	METRICS_FAMILY("autoprof_samples_stored", METRIC_COUNTER,
		       "Samples aggregated into the store"),
	METRICS_SAMPLE(struct oncpu_stats, ingested, "profile", "cpu"),
	METRICS_FAMILY("autoprof_samples_dropped", METRIC_COUNTER,
		       "Samples lost, by reason: ringbuf_full (BPF could not hand it over), "
		       "store_memory (store over its memory limit), malformed"),
	METRICS_SAMPLE(struct oncpu_stats, drop_ringbuf, "profile", "cpu", "reason",
		       "ringbuf_full"),
	METRICS_SAMPLE(struct oncpu_stats, drop_store, "profile", "cpu", "reason", "store_memory"),
	METRICS_SAMPLE(struct oncpu_stats, drop_malformed, "profile", "cpu", "reason", "malformed"),
	METRICS_FAMILY("autoprof_samples_idle", METRIC_COUNTER,
		       "Samples of idle CPUs, not recorded"),
	METRICS_SAMPLE(struct oncpu_stats, idle, "profile", "cpu"),
	METRICS_FAMILY("autoprof_stack_errors", METRIC_COUNTER,
		       "Samples whose kernel or user stack could not be read (kept without it)"),
	METRICS_SAMPLE(struct oncpu_stats, kstack_errors, "profile", "cpu", "stack", "kernel"),
	METRICS_SAMPLE(struct oncpu_stats, ustack_errors, "profile", "cpu", "stack", "user"),
	METRICS_FAMILY("autoprof_stacks_truncated", METRIC_COUNTER,
		       "Samples whose user stack was deeper than the walk (127 frames); other "
		       "truncations of table walks: autoprof_unwind_stacks_total"),
	METRICS_SAMPLE(struct oncpu_stats, ustack_truncated, "profile", "cpu"),
};

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
	METRICS_TABLE(w, oncpu_rows, &s);
	/*
	 * By hand from here: a family that comes and goes, and ring buffer families whose offcpu
	 * samples exist only with the off-CPU collector (and read another struct).
	 */
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

/* After autoprof_offcpu_enabled, which offcpu_metrics writes by hand (0 without a collector). */
static const struct metrics_row offcpu_rows[] = {
	METRICS_FAMILY("autoprof_offcpu_min_block_seconds", METRIC_GAUGE,
		       "Shortest off-CPU span recorded (offcpu.min-block)"),
	METRICS_SAMPLE_DIV(struct offcpu_stats, settings.min_block_ns, NSEC_PER_SEC),
	METRICS_FAMILY("autoprof_offcpu_sample_probability", METRIC_GAUGE,
		       "Fraction of off-CPU spans recorded (offcpu.sample-probability)"),
	METRICS_SAMPLE_DIV(struct offcpu_stats, settings.sample_ppm, 1e6),
	METRICS_FAMILY("autoprof_offcpu_spans", METRIC_COUNTER,
		       "Off-CPU spans that passed the filters in BPF and were sent to user space"),
	METRICS_SAMPLE(struct offcpu_stats, spans),
	METRICS_FAMILY("autoprof_offcpu_spans_stored", METRIC_COUNTER,
		       "Off-CPU spans joined with their user stack and aggregated into the store"),
	METRICS_SAMPLE(struct offcpu_stats, ingested),
	METRICS_FAMILY("autoprof_offcpu_spans_filtered", METRIC_COUNTER,
		       "Off-CPU spans not recorded, by reason: short (below offcpu.min-block), "
		       "long (over one hour), sampled_out (offcpu.sample-probability), "
		       "no_user_stack (no user frame, e.g. the thread exited in the kernel)"),
	METRICS_SAMPLE(struct offcpu_stats, filter_short, "reason", "short"),
	METRICS_SAMPLE(struct offcpu_stats, filter_long, "reason", "long"),
	METRICS_SAMPLE(struct offcpu_stats, filter_sampled, "reason", "sampled_out"),
	METRICS_SAMPLE(struct offcpu_stats, filter_no_user, "reason", "no_user_stack"),
	METRICS_FAMILY("autoprof_offcpu_spans_dropped", METRIC_COUNTER,
		       "Off-CPU spans lost, by reason: map_full (too many threads blocked at "
		       "once), ringbuf_full, task_work (the user stack could not be scheduled), "
		       "unjoined (no user stack came), store_memory, malformed"),
	METRICS_SAMPLE(struct offcpu_stats, drop_map_full, "reason", "map_full"),
	METRICS_SAMPLE(struct offcpu_stats, drop_ringbuf, "reason", "ringbuf_full"),
	METRICS_SAMPLE(struct offcpu_stats, drop_task_work, "reason", "task_work"),
	METRICS_SAMPLE(struct offcpu_stats, drop_unjoined, "reason", "unjoined"),
	METRICS_SAMPLE(struct offcpu_stats, drop_store, "reason", "store_memory"),
	METRICS_SAMPLE(struct offcpu_stats, drop_malformed, "reason", "malformed"),
	METRICS_FAMILY("autoprof_offcpu_stack_errors", METRIC_COUNTER,
		       "Off-CPU spans whose kernel or user stack could not be read, and user "
		       "stacks deeper than the BPF walk (127 frames); python_raced: Python frames "
		       "left out because another thread's walk on the CPU took their buffer"),
	METRICS_SAMPLE(struct offcpu_stats, kstack_errors, "stack", "kernel"),
	METRICS_SAMPLE(struct offcpu_stats, ustack_errors, "stack", "user"),
	METRICS_SAMPLE(struct offcpu_stats, ustack_truncated, "stack", "user_truncated"),
	METRICS_SAMPLE(struct offcpu_stats, python_raced, "stack", "python_raced"),
	METRICS_FAMILY("autoprof_offcpu_spans_waiting", METRIC_GAUGE,
		       "Off-CPU spans held in user space until their thread returns to user space"),
	METRICS_SAMPLE(struct offcpu_stats, waiting),
};

static void offcpu_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct offcpu_stats s;

	metrics__family(w, "autoprof_offcpu_enabled", METRIC_GAUGE,
			"Whether off-CPU spans are recorded (offcpu.enabled, changeable at run "
			"time)");
	if (!d->offcpu) {
		metrics__sample(w, 0, NULL);
		return;
	}
	offcpu__stats(d->offcpu, &s);
	metrics__sample(w, s.settings.enabled, NULL);
	METRICS_TABLE(w, offcpu_rows, &s);
}

struct store_view {
	struct store_stats s;
	uint64_t memory_limit;	/* store.memory-limit */
	uint64_t retention_ns;	/* profile.retention */
};

static const struct metrics_row store_rows[] = {
	METRICS_FAMILY("autoprof_store_stacks", METRIC_GAUGE, "Unique stacks held"),
	METRICS_SAMPLE(struct store_view, s.stacks),
	METRICS_FAMILY("autoprof_store_frames", METRIC_GAUGE, "Frames held by unique stacks"),
	METRICS_SAMPLE(struct store_view, s.frames),
	METRICS_FAMILY("autoprof_store_rows", METRIC_GAUGE,
		       "Aggregated (stack, thread) rows held across time slots"),
	METRICS_SAMPLE(struct store_view, s.rows),
	METRICS_FAMILY("autoprof_store_slots", METRIC_GAUGE, "One-second time slots held"),
	METRICS_SAMPLE(struct store_view, s.slots),
	METRICS_FAMILY("autoprof_store_memory_bytes", METRIC_GAUGE, "Bytes the store holds"),
	METRICS_SAMPLE(struct store_view, s.bytes),
	METRICS_FAMILY("autoprof_store_memory_limit_bytes", METRIC_GAUGE,
		       "The store's memory limit (store.memory-limit)"),
	METRICS_SAMPLE(struct store_view, memory_limit),
	METRICS_FAMILY("autoprof_store_retention_seconds", METRIC_GAUGE,
		       "How far back profiles reach (profile.retention)"),
	METRICS_SAMPLE_DIV(struct store_view, retention_ns, NSEC_PER_SEC),
	METRICS_FAMILY("autoprof_store_slots_evicted", METRIC_COUNTER,
		       "Time slots dropped before their retention to stay under the memory limit"),
	METRICS_SAMPLE(struct store_view, s.slots_evicted_memory),
	METRICS_FAMILY("autoprof_store_samples_late", METRIC_COUNTER,
		       "Samples that arrived after their time slot was recycled"),
	METRICS_SAMPLE(struct store_view, s.samples_too_old),
};

static void store_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct store_view v = {
		.memory_limit = d->cfg.store_memory_limit,
		.retention_ns = d->cfg.profile_retention_ns,
	};

	store__stats(d->ctx.store, &v.s);
	METRICS_TABLE(w, store_rows, &v);
}

struct proc_view {
	struct proctab_stats t;
	struct proc_collector_stats p;
	struct container_stats c;
	uint64_t maps_ok, ctx_ok; /* reads neither gone nor failed */
};

static const struct metrics_row proc_rows[] = {
	METRICS_FAMILY("autoprof_processes_tracked", METRIC_GAUGE,
		       "Processes whose mappings autoprof holds"),
	METRICS_SAMPLE(struct proc_view, t.processes),
	METRICS_FAMILY("autoprof_process_events", METRIC_COUNTER,
		       "Process exec and exit events seen"),
	METRICS_SAMPLE(struct proc_view, p.execs, "event", "exec"),
	METRICS_SAMPLE(struct proc_view, p.exits, "event", "exit"),
	METRICS_FAMILY("autoprof_process_events_dropped", METRIC_COUNTER,
		       "Process events lost to a full ring buffer"),
	METRICS_SAMPLE(struct proc_view, p.dropped),
	METRICS_FAMILY("autoprof_unwind_exec_tables", METRIC_COUNTER,
		       "Executables whose text was published for stack walks at exec, before "
		       "their maps were read (their unwind table was built already)"),
	METRICS_SAMPLE(struct proc_view, p.exec_tables),
	METRICS_FAMILY("autoprof_unwind_start_tables", METRIC_COUNTER,
		       "Tables published at exec made again at glibc's __libc_start_main, with the "
		       "libraries the loader mapped (processes not learned yet)"),
	METRICS_SAMPLE(struct proc_view, p.start_tables),
	METRICS_FAMILY("autoprof_unwind_fork_tables", METRIC_COUNTER,
		       "Forked children (not vfork) given their parent's mapping table for stack "
		       "walks at fork, before their maps were read"),
	METRICS_SAMPLE(struct proc_view, p.fork_tables),
	METRICS_FAMILY("autoprof_maps_rereads_after_exec", METRIC_COUNTER,
		       "Maps read again 1, 4 and 32 ms after an exec, once the loader had mapped "
		       "the libraries (trace-context variables in them)"),
	METRICS_SAMPLE(struct proc_view, p.relearned),
	METRICS_FAMILY("autoprof_maps_rereads_dlopen", METRIC_COUNTER,
		       "Maps read again at a dlsym after a dlopen (the process's mappings changed "
		       "since its last dlsym), with GPU memory profiling on"),
	METRICS_SAMPLE(struct proc_view, p.mapped),
	METRICS_FAMILY("autoprof_dlopen_watched_libraries", METRIC_GAUGE,
		       "C library files (libc, libdl) looked at for dlsym, probed where they have "
		       "it (at most 16)"),
	METRICS_SAMPLE(struct proc_view, p.dlopen_libs),
	METRICS_FAMILY("autoprof_dlopen_watch_failures", METRIC_COUNTER,
		       "C library files whose dlsym could not be probed"),
	METRICS_SAMPLE(struct proc_view, p.dlopen_failed),
	METRICS_FAMILY("autoprof_quiet_executables", METRIC_GAUGE,
		       "Executables whose execs wake nobody and read nothing (an earlier process of "
		       "each needed nothing at its exec: no trace context, runtime or target)"),
	METRICS_SAMPLE(struct proc_view, p.quiet_exes),
	METRICS_FAMILY("autoprof_quiet_executables_revoked", METRIC_COUNTER,
		       "Executables no longer quiet: a later process of one needed more"),
	METRICS_SAMPLE(struct proc_view, p.unquieted),
	METRICS_FAMILY("autoprof_quiet_execs", METRIC_COUNTER,
		       "Execs of quiet executables, taken at the next drain with nothing read"),
	METRICS_SAMPLE(struct proc_view, p.quiet_execs),
	METRICS_FAMILY("autoprof_quiet_processes_named", METRIC_COUNTER,
		       "Quiet processes given their mappings, by how: learned (maps read while it "
		       "lived, for its samples) or exit_maps (never learned: the mappings its exit "
		       "reported name what it left in the rings)"),
	METRICS_SAMPLE(struct proc_view, t.quiet_learned, "how", "learned"),
	METRICS_SAMPLE(struct proc_view, t.named_at_exit, "how", "exit_maps"),
	METRICS_FAMILY("autoprof_quiet_samples_described", METRIC_COUNTER,
		       "Samples of quiet processes not learned yet that named every frame by its "
		       "file and offset: resolved with nothing read"),
	METRICS_SAMPLE(struct proc_view, t.quiet_described),
	METRICS_FAMILY("autoprof_process_exit_mappings", METRIC_COUNTER,
		       "Exits of processes exec'd since start that reported their executable "
		       "mappings"),
	METRICS_SAMPLE(struct proc_view, p.exit_maps),
	METRICS_FAMILY("autoprof_process_exit_mappings_unsaid", METRIC_COUNTER,
		       "Exits of quiet processes never sampled, every file they mapped known: "
		       "their mappings not reported (nothing left to name)"),
	METRICS_SAMPLE(struct proc_view, p.exit_maps_unsaid),
	METRICS_FAMILY("autoprof_maps_reads", METRIC_COUNTER,
		       "Reads of /proc/PID/maps, by result (gone: the process exited first)"),
	METRICS_SAMPLE(struct proc_view, maps_ok, "result", "ok"),
	METRICS_SAMPLE(struct proc_view, t.maps_gone, "result", "gone"),
	METRICS_SAMPLE(struct proc_view, t.maps_errors, "result", "error"),
	METRICS_FAMILY("autoprof_maps_inherited", METRIC_COUNTER,
		       "Forked processes gone before their maps were read, named by the maps of "
		       "the parent they were forked from (they had not exec'd)"),
	METRICS_SAMPLE(struct proc_view, t.maps_inherited),
	METRICS_FAMILY("autoprof_stacks_before_exec", METRIC_COUNTER,
		       "Stacks taken before their process's exec, named by the image and maps of "
		       "the parent it was forked from (whose image it ran then)"),
	METRICS_SAMPLE(struct proc_view, t.stacks_before_exec),
	METRICS_FAMILY("autoprof_frames_unmapped", METRIC_COUNTER,
		       "User addresses outside every known mapping of their process"),
	METRICS_SAMPLE(struct proc_view, t.frames_unmapped),
	METRICS_FAMILY("autoprof_process_context_reads", METRIC_COUNTER,
		       "Reads of a process's OpenTelemetry process context (OTEL_CTX), by result: "
		       "ok, gone, unpublished (mapped, not published yet or changing), error"),
	METRICS_SAMPLE(struct proc_view, ctx_ok, "result", "ok"),
	METRICS_SAMPLE(struct proc_view, t.ctx_gone, "result", "gone"),
	METRICS_SAMPLE(struct proc_view, t.ctx_unpublished, "result", "unpublished"),
	METRICS_SAMPLE(struct proc_view, t.ctx_errors, "result", "error"),
	METRICS_FAMILY("autoprof_container_id_lookups", METRIC_COUNTER,
		       "Container IDs of new processes, by source: cache (the cgroups of an "
		       "earlier exec) or cgroup_file (/proc/PID/cgroup read)"),
	METRICS_SAMPLE(struct proc_view, c.cached, "source", "cache"),
	METRICS_SAMPLE(struct proc_view, c.reads, "source", "cgroup_file"),
	METRICS_FAMILY("autoprof_container_id_unkept", METRIC_COUNTER,
		       "cgroup file reads not cached: a task moved between cgroups from the "
		       "process's exec to the read"),
	METRICS_SAMPLE(struct proc_view, c.unkept),
	METRICS_FAMILY("autoprof_container_id_flushes", METRIC_COUNTER,
		       "Container ID caches emptied because a cgroup was renamed"),
	METRICS_SAMPLE(struct proc_view, c.flushes),
};

static void proc_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct proc_view v = { 0 };

	proctab__stats(d->ctx.proctab, &v.t);
	proctab__container_stats(d->ctx.proctab, &v.c);
	if (d->procs)
		proc_collector__stats(d->procs, &v.p);
	v.maps_ok = v.t.maps_reads - v.t.maps_gone - v.t.maps_errors;
	v.ctx_ok = v.t.ctx_reads - v.t.ctx_gone - v.t.ctx_unpublished - v.t.ctx_errors;
	METRICS_TABLE(w, proc_rows, &v);
}

struct symbolizer_view {
	struct symbolizer_stats s;
	uint64_t loads_ok, load_errors_other; /* errors neither unreadable, not_elf nor too_large */
	uint64_t cache_max;		      /* symbolizer.cache-size */
};

static const struct metrics_row symbolizer_rows[] = {
	METRICS_FAMILY("autoprof_symbolizer_lookups", METRIC_COUNTER,
		       "Frames symbolized, by result: hit (named), miss (no symbol covers it), "
		       "failure (its object could not be read)"),
	METRICS_SAMPLE(struct symbolizer_view, s.lookups_hit, "result", "hit"),
	METRICS_SAMPLE(struct symbolizer_view, s.lookups_miss, "result", "miss"),
	METRICS_SAMPLE(struct symbolizer_view, s.lookups_failed, "result", "failure"),
	METRICS_FAMILY("autoprof_symbolizer_loads", METRIC_COUNTER,
		       "Symbol sources loaded, by result: ok, unreadable (the file could not be "
		       "opened while mapped), not_elf, too_large (past a size budget: its symbol "
		       "names, its Go table, its MiniDebugInfo), error"),
	METRICS_SAMPLE(struct symbolizer_view, loads_ok, "result", "ok"),
	METRICS_SAMPLE(struct symbolizer_view, s.load_errors_unreadable, "result", "unreadable"),
	METRICS_SAMPLE(struct symbolizer_view, s.load_errors_not_elf, "result", "not_elf"),
	METRICS_SAMPLE(struct symbolizer_view, s.load_errors_too_large, "result", "too_large"),
	METRICS_SAMPLE(struct symbolizer_view, load_errors_other, "result", "error"),
	METRICS_FAMILY("autoprof_symbolizer_files_opened", METRIC_COUNTER,
		       "Mapped files opened to be named: once a file (device and inode) while it "
		       "stays known, a copy with a known build ID included"),
	METRICS_SAMPLE(struct symbolizer_view, s.opens),
	METRICS_FAMILY("autoprof_symbolizer_open_errors", METRIC_COUNTER,
		       "Mapped files that could not be opened (process gone, permissions)"),
	METRICS_SAMPLE(struct symbolizer_view, s.open_errors),
	METRICS_FAMILY("autoprof_symbolizer_files_rewritten", METRIC_COUNTER,
		       "Mapped files found rewritten in place (same inode) since they were read, "
		       "and read anew"),
	METRICS_SAMPLE(struct symbolizer_view, s.files_rewritten),
	METRICS_FAMILY("autoprof_symbolizer_evictions", METRIC_COUNTER,
		       "Symbol tables dropped to stay within symbolizer.cache-size"),
	METRICS_SAMPLE(struct symbolizer_view, s.evictions),
	METRICS_FAMILY("autoprof_symbolizer_dwarf_releases", METRIC_COUNTER,
		       "DWARF readers let go: once a file of at most 16 MiB of sections is "
		       "copied whole, or a bigger one's after symbolizer.debuginfo-idle without "
		       "a new compilation unit (what they named keeps being named)"),
	METRICS_SAMPLE(struct symbolizer_view, s.dwarf_releases),
	METRICS_FAMILY("autoprof_symbolizer_dwarf_reopens", METRIC_COUNTER,
		       "DWARF readers opened again for a compilation unit not read before"),
	METRICS_SAMPLE(struct symbolizer_view, s.dwarf_reopens),
	METRICS_FAMILY("autoprof_symbolizer_cache_bytes", METRIC_GAUGE,
		       "Bytes held by loaded symbol tables"),
	METRICS_SAMPLE(struct symbolizer_view, s.bytes),
	METRICS_FAMILY("autoprof_symbolizer_cache_max_bytes", METRIC_GAUGE,
		       "The cap on autoprof_symbolizer_cache_bytes (symbolizer.cache-size): past "
		       "it the least recently used tables go"),
	METRICS_SAMPLE(struct symbolizer_view, cache_max),
	METRICS_FAMILY("autoprof_symbolizer_objects", METRIC_GAUGE,
		       "Executables and libraries known to the symbolizer"),
	METRICS_SAMPLE(struct symbolizer_view, s.dsos),
};

static void symbolizer_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct symbolizer_view v;

	symbolizer__stats(d->ctx.sym, &v.s);
	v.loads_ok = v.s.loads - v.s.load_errors;
	v.load_errors_other = v.s.load_errors - v.s.load_errors_unreadable -
			      v.s.load_errors_not_elf - v.s.load_errors_too_large;
	v.cache_max = d->cfg.symbolizer_cache_size;
	METRICS_TABLE(w, symbolizer_rows, &v);
}

struct file_view {
	uint64_t n[UFILE_NR_REASONS];
	uint64_t source[WEBUI_SOURCE_NR];
};

/* Every reason is written, zeros too: a rate() over a reason that appears late misses its start. */
static const struct metrics_row file_rows[] = {
	METRICS_FAMILY("autoprof_file_errors", METRIC_COUNTER,
		       "Files that users and containers control (perf maps, mapped objects, probe "
		       "binaries) refused or failed while read, by reason: not_regular (FIFO, "
		       "device, directory), too_large, symlink (where none is allowed), owner "
		       "(neither the process's user nor root), truncated (shrank while read), "
		       "overlong_line (a perf map line skipped), read_error"),
	METRICS_SAMPLE(struct file_view, n[UFILE_NOT_REGULAR], "reason", "not_regular"),
	METRICS_SAMPLE(struct file_view, n[UFILE_TOO_LARGE], "reason", "too_large"),
	METRICS_SAMPLE(struct file_view, n[UFILE_SYMLINK], "reason", "symlink"),
	METRICS_SAMPLE(struct file_view, n[UFILE_OWNER], "reason", "owner"),
	METRICS_SAMPLE(struct file_view, n[UFILE_TRUNCATED], "reason", "truncated"),
	METRICS_SAMPLE(struct file_view, n[UFILE_OVERLONG_LINE], "reason", "overlong_line"),
	METRICS_SAMPLE(struct file_view, n[UFILE_READ_ERROR], "reason", "read_error"),
	METRICS_FAMILY("autoprof_source_reads", METRIC_COUNTER,
		       "Source text the web view's source view asked for, by result: ok, "
		       "admin_api_off (shown with --web.enable-admin-api only), not_source (the "
		       "file a binary's DWARF names is not named like source code), unreadable "
		       "(missing, refused as autoprof_file_errors_total counts, or failed)"),
	METRICS_SAMPLE(struct file_view, source[WEBUI_SOURCE_OK], "result", "ok"),
	METRICS_SAMPLE(struct file_view, source[WEBUI_SOURCE_OFF], "result", "admin_api_off"),
	METRICS_SAMPLE(struct file_view, source[WEBUI_SOURCE_NOT_SOURCE], "result", "not_source"),
	METRICS_SAMPLE(struct file_view, source[WEBUI_SOURCE_UNREADABLE], "result", "unreadable"),
};

_Static_assert(WEBUI_SOURCE_NR == 4, "a row per result in file_rows");

_Static_assert(UFILE_NR_REASONS == 7, "a row per reason in file_rows");

static void file_metrics(struct metrics_writer *w, void *ctx)
{
	struct file_view v;

	(void)ctx;
	ufile__stats(v.n);
	webui__source_stats(v.source);
	METRICS_TABLE(w, file_rows, &v);
}

static const struct metrics_row unwind_rows[] = {
	METRICS_FAMILY("autoprof_unwind_stacks", METRIC_COUNTER,
		       "User stacks walked by unwind tables, by how the walk ended: complete "
		       "(reached the outermost frame) or truncated_* (depth: over 127 frames; "
		       "read: stack memory unreadable; rule: an unwind rule BPF cannot follow; "
		       "noinfo: a frame with neither unwind info nor frame pointer; pending: a frame whose "
		       "table or mapping is not known yet; noroom: a frame whose table did not fit "
		       "unwind.memory-limit), or exec (no user stack: sampled in execve after the old "
		       "image was gone)"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_COMPLETE], "result", "complete"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_IMAGE_GONE], "result", "exec"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_TRUNC_DEPTH], "result",
		       "truncated_depth"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_TRUNC_READ], "result",
		       "truncated_read"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_TRUNC_RULE], "result",
		       "truncated_rule"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_TRUNC_NOINFO], "result",
		       "truncated_noinfo"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_TRUNC_PENDING], "result",
		       "truncated_pending"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_TRUNC_NOROOM], "result",
		       "truncated_noroom"),
	METRICS_FAMILY("autoprof_unwind_stacks_fp_only", METRIC_COUNTER,
		       "User stacks of processes with no mapping table yet (their first "
		       "samples): walked through the kernel's mappings as far as built tables "
		       "go, then marked truncated"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_NO_PROC]),
	METRICS_FAMILY("autoprof_unwind_frames", METRIC_COUNTER,
		       "User frames unwound, by method: table (an .eh_frame row), fp (frame "
		       "pointer: JIT code, Go, files without unwind info) or jit_exit (out of "
		       "JIT code to the frame its runtime entered it from: LuaJIT's traces)"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_FRAMES_TABLE], "method", "table"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_FRAMES_FP], "method", "fp"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_FRAMES_JIT_EXIT], "method",
		       "jit_exit"),
	METRICS_FAMILY("autoprof_unwind_frames_cached", METRIC_COUNTER,
		       "User frames of autoprof_unwind_frames whose rule came from the walk cache "
		       "(a stack seen recently, checked frame by frame) instead of the tables"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_FRAMES_CACHED]),
	METRICS_FAMILY("autoprof_unwind_mapping_misses", METRIC_COUNTER,
		       "Stacks with a pc outside their process's known mappings (read again)"),
	METRICS_SAMPLE(struct unwinder_stats, bpf[UNWIND_CNT_MAPPING_MISS]),
	METRICS_FAMILY("autoprof_unwind_table_bytes", METRIC_GAUGE,
		       "Bytes of unwind table rows loaded into BPF"),
	METRICS_SAMPLE(struct unwinder_stats, row_bytes),
	METRICS_FAMILY("autoprof_unwind_table_capacity_bytes", METRIC_GAUGE,
		       "Bytes of unwind table rows BPF can hold (unwind.memory-limit)"),
	METRICS_SAMPLE(struct unwinder_stats, capacity_bytes),
	METRICS_FAMILY("autoprof_unwind_table_allocated_bytes", METRIC_GAUGE,
		       "Bytes of BPF arrays made for unwind tables so far: they grow with the "
		       "tables, 256 KiB at a time, up to the capacity"),
	METRICS_SAMPLE(struct unwinder_stats, allocated_bytes),
	METRICS_FAMILY("autoprof_unwind_cache_bytes", METRIC_GAUGE,
		       "Bytes of the samplers' walk caches in BPF, all CPUs (unwind.walk-cache)"),
	METRICS_SAMPLE(struct unwinder_stats, cache_bytes),
	METRICS_FAMILY("autoprof_unwind_files", METRIC_GAUGE,
		       "Executables and libraries with an unwind table loaded"),
	METRICS_SAMPLE(struct unwinder_stats, files),
	METRICS_FAMILY("autoprof_unwind_processes", METRIC_GAUGE,
		       "Processes with a mapping table in BPF"),
	METRICS_SAMPLE(struct unwinder_stats, processes),
	METRICS_FAMILY("autoprof_unwind_table_builds", METRIC_COUNTER,
		       "Unwind tables built from files, by result (error: unwind info unreadable)"),
	METRICS_SAMPLE(struct unwinder_stats, builds, "result", "ok"),
	METRICS_SAMPLE(struct unwinder_stats, build_errors, "result", "error"),
	METRICS_FAMILY("autoprof_unwind_tables_reused", METRIC_COUNTER,
		       "Mappings of a file whose unwind table was already loaded or being built "
		       "(a binary or library mapped again), not built anew"),
	METRICS_SAMPLE(struct unwinder_stats, reuses),
	METRICS_FAMILY("autoprof_unwind_tables_urgent", METRIC_COUNTER,
		       "Unwind tables built ahead of the queue for a process started while "
		       "profiling (its first samples wait for them)"),
	METRICS_SAMPLE(struct unwinder_stats, urgent_builds),
	METRICS_FAMILY("autoprof_unwind_table_build_seconds", METRIC_COUNTER,
		       "Time spent building unwind tables"),
	METRICS_SAMPLE_DIV(struct unwinder_stats, build_ns, NSEC_PER_SEC),
	METRICS_FAMILY("autoprof_unwind_table_evictions", METRIC_COUNTER,
		       "Unwind tables dropped to stay within unwind.memory-limit"),
	METRICS_SAMPLE(struct unwinder_stats, evictions),
	METRICS_FAMILY("autoprof_unwind_tables_too_big", METRIC_COUNTER,
		       "Files whose unwind table alone exceeds unwind.memory-limit"),
	METRICS_SAMPLE(struct unwinder_stats, too_big),
	METRICS_FAMILY("autoprof_unwind_mappings_truncated", METRIC_COUNTER,
		       "Process mapping tables cut at 256 executable mappings"),
	METRICS_SAMPLE(struct unwinder_stats, maps_truncated),
	METRICS_FAMILY("autoprof_unwind_update_errors", METRIC_COUNTER,
		       "BPF map updates of unwind tables that failed"),
	METRICS_SAMPLE(struct unwinder_stats, update_errors),
};

static void unwind_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct unwinder_stats s;

	if (!d->ctx.unwinder)
		return;
	unwinder__stats(d->ctx.unwinder, &s);
	METRICS_TABLE(w, unwind_rows, &s);
}

static const struct metrics_row memory_rows[] = {
	METRICS_FAMILY("autoprof_memory_targets", METRIC_GAUGE,
		       "Memory profiling targets (memory.targets and the API)"),
	METRICS_SAMPLE(struct memory_stats, targets),
	METRICS_FAMILY("autoprof_memory_processes", METRIC_GAUGE,
		       "Processes matched by a memory target, by state: attached (allocator "
		       "probed) or pending (waiting for its allocator to be mapped)"),
	METRICS_SAMPLE(struct memory_stats, procs_attached, "state", "attached"),
	METRICS_SAMPLE(struct memory_stats, procs_pending, "state", "pending"),
	METRICS_FAMILY("autoprof_memory_preload_processes", METRIC_GAUGE,
		       "Attached processes profiled through the preload shim (its ring read, "
		       "the allocator not probed)"),
	METRICS_SAMPLE(struct memory_stats, procs_preload),
	METRICS_FAMILY("autoprof_memory_go_processes", METRIC_GAUGE,
		       "Attached Go processes profiled through the runtime's sampled path "
		       "(runtime.mProf_Malloc, runtime.freeSpecial)"),
	METRICS_SAMPLE(struct memory_stats, procs_go),
	METRICS_FAMILY("autoprof_memory_java_processes", METRIC_GAUGE,
		       "Target JVMs whose allocations HotSpot reports to the probes (AllocTracer)"),
	METRICS_SAMPLE(struct memory_stats, procs_java),
	METRICS_FAMILY("autoprof_memory_jvms_unprobed", METRIC_COUNTER,
		       "Target JVMs not memory-profiled: their libjvm.so has no AllocTracer in its "
		       "symbol table"),
	METRICS_SAMPLE(struct memory_stats, jvm_unprobed),
	METRICS_FAMILY("autoprof_memory_java_classes_unnamed", METRIC_COUNTER,
		       "Java allocation samples whose class could not be read from the JVM "
		       "(stored without it)"),
	METRICS_SAMPLE(struct memory_stats, java_class_unnamed),
	METRICS_FAMILY("autoprof_memory_live_allocations", METRIC_GAUGE,
		       "Live sampled allocations held for the heap profile"),
	METRICS_SAMPLE(struct memory_stats, live),
	METRICS_FAMILY("autoprof_memory_live_bytes", METRIC_GAUGE,
		       "Live bytes the held samples stand for (estimated)"),
	METRICS_SAMPLE(struct memory_stats, live_bytes),
	METRICS_FAMILY("autoprof_memory_calls", METRIC_COUNTER,
		       "Allocator calls seen by the probes, by kind: alloc (of which sampled and "
		       "nested: inside another probed call), free (of which of a sampled block)"),
	METRICS_SAMPLE(struct memory_stats, bpf[MEMORY_CNT_CALLS], "call", "alloc"),
	METRICS_SAMPLE(struct memory_stats, bpf[MEMORY_CNT_SAMPLED], "call", "alloc_sampled"),
	METRICS_SAMPLE(struct memory_stats, bpf[MEMORY_CNT_NESTED], "call", "alloc_nested"),
	METRICS_SAMPLE(struct memory_stats, bpf[MEMORY_CNT_FREES], "call", "free"),
	METRICS_SAMPLE(struct memory_stats, bpf[MEMORY_CNT_FREES_SAMPLED], "call", "free_sampled"),
	METRICS_FAMILY("autoprof_memory_samples_stored", METRIC_COUNTER,
		       "Sampled allocations aggregated into the store (allocs)"),
	METRICS_SAMPLE(struct memory_stats, ingested),
	METRICS_FAMILY("autoprof_memory_dropped", METRIC_COUNTER,
		       "Memory samples lost or untracked, by reason: live_full (live table full: "
		       "in allocs, not in heap), ringbuf_full, raced (another thread's sample took "
		       "over its per-CPU buffer), store_memory, malformed, "
		       "preload_ring_full (records a preload shim could not write), "
		       "preload_malformed (a shim's ring skipped to its head)"),
	METRICS_SAMPLE(struct memory_stats, bpf[MEMORY_CNT_DROP_LIVE_FULL], "reason", "live_full"),
	METRICS_SAMPLE(struct memory_stats, bpf[MEMORY_CNT_DROP_RINGBUF], "reason",
		       "ringbuf_full"),
	METRICS_SAMPLE(struct memory_stats, bpf[MEMORY_CNT_DROP_RACED], "reason", "raced"),
	METRICS_SAMPLE(struct memory_stats, drop_store, "reason", "store_memory"),
	METRICS_SAMPLE(struct memory_stats, drop_malformed, "reason", "malformed"),
	METRICS_SAMPLE(struct memory_stats, preload.dropped, "reason", "preload_ring_full"),
	METRICS_SAMPLE(struct memory_stats, preload.malformed, "reason", "preload_malformed"),
	METRICS_FAMILY("autoprof_memory_preload_ring_bytes", METRIC_COUNTER,
		       "Bytes of sampled allocations (with their stack copies) and frees read "
		       "from preload shims' rings"),
	METRICS_SAMPLE(struct memory_stats, preload.bytes),
	METRICS_FAMILY("autoprof_memory_preload_stacks_cut", METRIC_COUNTER,
		       "Preload samples whose stack copy was cut at the shim's "
		       "AUTOPROF_PRELOAD_STACK_MAX (their stacks end truncated)"),
	METRICS_SAMPLE(struct memory_stats, preload.stack_cut),
	METRICS_FAMILY("autoprof_memory_attaches", METRIC_COUNTER,
		       "Target processes whose allocator was probed (ok) or could not be (failed)"),
	METRICS_SAMPLE(struct memory_stats, attach_ok, "result", "ok"),
	METRICS_SAMPLE(struct memory_stats, attach_failed, "result", "failed"),
	METRICS_FAMILY("autoprof_memory_probes", METRIC_COUNTER,
		       "Allocator probes placed, by instruction: emulated (cheap) or entry "
		       "(single-stepped, ~20x the cost)"),
	METRICS_SAMPLE(struct memory_stats, probes_emulated, "placement", "emulated"),
	METRICS_SAMPLE(struct memory_stats, probes_entry, "placement", "entry"),
};

static void memory_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct memory_stats s;

	if (!d->memory)
		return;
	memory__stats(d->memory, &s);
	METRICS_TABLE(w, memory_rows, &s);
}

static const struct metrics_row gpumem_rows[] = {
	METRICS_FAMILY("autoprof_gpu_libraries", METRIC_GAUGE,
		       "CUDA library files (libcudart.so.*, libcuda.so.1) probed for every process "
		       "that maps them"),
	METRICS_SAMPLE(struct gpumem_stats, libraries),
	METRICS_FAMILY("autoprof_gpu_attach_failures", METRIC_COUNTER,
		       "CUDA library files that could not be probed (no memory functions found, "
		       "attach failed, or more than 64 files)"),
	METRICS_SAMPLE(struct gpumem_stats, attach_failed),
	METRICS_FAMILY("autoprof_gpu_calls", METRIC_COUNTER,
		       "Probed CUDA calls, by outcome: entered, nested (inside another probed call, "
		       "counted there), failed (an error returned: nothing recorded), unreadable "
		       "(its result could not be read), alloc and free (sent)"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_CALLS], "outcome", "entered"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_NESTED], "outcome", "nested"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_FAILED], "outcome", "failed"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_UNREADABLE], "outcome", "unreadable"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_ALLOCS], "outcome", "alloc"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_FREES], "outcome", "free"),
	METRICS_FAMILY("autoprof_gpu_pytorch_tensors", METRIC_COUNTER,
		       "PyTorch tensors made (its pytorch:malloc USDT probe); those sampled "
		       "(gpu.pytorch-sample-interval) are among the allocations sent"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_TENSORS], "state", "made"),
	METRICS_FAMILY("autoprof_gpu_pytorch_sample_interval_bytes", METRIC_GAUGE,
		       "Mean bytes between sampled PyTorch tensors (1: every one)"),
	METRICS_SAMPLE(struct gpumem_stats, torch_mean),
	METRICS_FAMILY("autoprof_gpu_live_allocations", METRIC_GAUGE,
		       "Live GPU allocations held for gpuheap"),
	METRICS_SAMPLE(struct gpumem_stats, live),
	METRICS_FAMILY("autoprof_gpu_frees_unknown", METRIC_COUNTER,
		       "Frees of GPU memory not held (allocated before autoprof probed the library)"),
	METRICS_SAMPLE(struct gpumem_stats, frees_unknown),
	METRICS_FAMILY("autoprof_gpu_samples_stored", METRIC_COUNTER,
		       "GPU allocations aggregated into the store (gpuallocs)"),
	METRICS_SAMPLE(struct gpumem_stats, ingested),
	METRICS_FAMILY("autoprof_gpu_dropped", METRIC_COUNTER,
		       "GPU allocations lost or not held, by reason: live_full (gpu.max-live "
		       "reached: in gpuallocs, not in gpuheap), ringbuf_full, raced, ctx_full (a "
		       "context's device not kept), store_memory, malformed"),
	METRICS_SAMPLE(struct gpumem_stats, drop_live_full, "reason", "live_full"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_DROP_RINGBUF], "reason",
		       "ringbuf_full"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_DROP_RACED], "reason", "raced"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_CTX_FULL], "reason", "ctx_full"),
	METRICS_SAMPLE(struct gpumem_stats, bpf[GPUMEM_CNT_TORCH_FULL], "reason", "tensors_full"),
	METRICS_SAMPLE(struct gpumem_stats, drop_store, "reason", "store_memory"),
	METRICS_SAMPLE(struct gpumem_stats, drop_malformed, "reason", "malformed"),
};

static void gpumem_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct gpumem_stats s;

	if (!d->gpumem)
		return;
	gpumem__stats(d->gpumem, &s);
	METRICS_TABLE(w, gpumem_rows, &s);
	/* By hand: one sample per process and device of the live set. */
	gpumem__inuse_metrics(d->gpumem, w);
}

static const struct metrics_row jvm_rows[] = {
	METRICS_FAMILY("autoprof_jvm_processes", METRIC_GAUGE,
		       "Live HotSpot JVMs whose samples hit JIT code"),
	METRICS_SAMPLE(struct jvm_stats, processes),
	METRICS_FAMILY("autoprof_jvm_perf_map_requests", METRIC_COUNTER,
		       "Perf maps asked of JVMs through the attach API (jcmd Compiler.perfmap), by "
		       "result: ok, failed (no listener, -Xrs, timeout), skipped (a map autoprof "
		       "did not cause was there)"),
	METRICS_SAMPLE(struct jvm_stats, requests_ok, "result", "ok"),
	METRICS_SAMPLE(struct jvm_stats, requests_failed, "result", "failed"),
	METRICS_SAMPLE(struct jvm_stats, requests_skipped, "result", "skipped"),
	METRICS_FAMILY("autoprof_jvm_perf_maps_removed", METRIC_COUNTER,
		       "Perf maps autoprof caused, removed when their JVM exited"),
	METRICS_SAMPLE(struct jvm_stats, maps_removed),
	METRICS_FAMILY("autoprof_jvm_stacks_cut", METRIC_COUNTER,
		       "JVM stacks cut after the first JIT frame because the JVM keeps no frame "
		       "pointers (-XX:-PreserveFramePointer) or has not said yet"),
	METRICS_SAMPLE(struct jvm_stats, stacks_cut),
	METRICS_FAMILY("autoprof_jvm_interpreted_frames_unnamed", METRIC_COUNTER,
		       "Interpreted Java frames whose method could not be read from the JVM "
		       "(named Interpreter)"),
	METRICS_SAMPLE(struct jvm_stats, methods_unnamed),
	METRICS_FAMILY("autoprof_jvm_attach", METRIC_COUNTER,
		       "Attach API calls, done as the JVM's user in its mount namespace, by result: "
		       "ok, symlink (a symlink where the trigger or socket goes: refused), owner "
		       "(socket or peer not the JVM's user), busy (another attacher's trigger "
		       "was there and no listener came: no signal sent), timeout, ns (its namespace, "
		       "root or cwd could not be entered), ids (its uid/gid could not be taken), "
		       "no_listener, gone, bad_reply, error"),
#define JVMATTACH_ROW(e, s) METRICS_SAMPLE(struct jvm_stats, attach[JVMATTACH_##e], "result", s),
	JVMATTACH_WHYS(JVMATTACH_ROW)
#undef JVMATTACH_ROW
};

static void jvm_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct jvm_stats s;

	if (!d->jvm)
		return;
	jvm__stats(d->jvm, &s);
	METRICS_TABLE(w, jvm_rows, &s);
}

struct python_view {
	struct symbolizer_stats sym; /* interpreted positions are the symbolizer's */
	struct python_stats py;
};

static const struct metrics_row python_rows[] = {
	METRICS_FAMILY("autoprof_interpreted_positions", METRIC_GAUGE,
		       "Distinct (function, file, line) of interpreted frames held for naming "
		       "(kept for autoprof's lifetime, at most 262144)"),
	METRICS_SAMPLE(struct python_view, sym.interp_frames),
	METRICS_FAMILY("autoprof_python_processes", METRIC_COUNTER,
		       "CPython processes found, by result: supported (Python frames), "
		       "unknown_version (native frames only), error (its binary unreadable)"),
	METRICS_SAMPLE(struct python_view, py.supported, "result", "supported"),
	METRICS_SAMPLE(struct python_view, py.unknown_version, "result", "unknown_version"),
	METRICS_SAMPLE(struct python_view, py.errors, "result", "error"),
	METRICS_FAMILY("autoprof_python_samples", METRIC_COUNTER, "Samples with Python frames"),
	METRICS_SAMPLE(struct python_view, py.samples),
	METRICS_FAMILY("autoprof_python_frames", METRIC_COUNTER,
		       "Python frames named in samples"),
	METRICS_SAMPLE(struct python_view, py.frames),
	METRICS_FAMILY("autoprof_python_errors", METRIC_COUNTER,
		       "Python frames left native, by reason: code_unreadable (its code object "
		       "could not be read: mostly a process that exited before its samples were "
		       "drained), mismatch (a complete native stack whose "
		       "evaluation-loop frames and Python frame groups disagree)"),
	METRICS_SAMPLE(struct python_view, py.code_errors, "reason", "code_unreadable"),
	METRICS_SAMPLE(struct python_view, py.mismatches, "reason", "mismatch"),
	METRICS_FAMILY("autoprof_python_code_cache_bytes", METRIC_GAUGE,
		       "Bytes of Python code objects (names, files, line tables, tables) held for "
		       "naming, all processes together"),
	METRICS_SAMPLE(struct python_view, py.code_cache_bytes),
	METRICS_FAMILY("autoprof_python_code_cache_max_bytes", METRIC_GAUGE,
		       "Cap on autoprof_python_code_cache_bytes: past it every process's cache "
		       "starts over"),
	METRICS_SAMPLE(struct python_view, py.code_cache_max_bytes),
	METRICS_FAMILY("autoprof_python_code_cache_flushes", METRIC_COUNTER,
		       "Times the Python code caches reached their cap and started over"),
	METRICS_SAMPLE(struct python_view, py.code_cache_flushes),
};

static void python_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct python_view v;

	python__stats(d->ctx.python, &v.py);
	symbolizer__stats(d->ctx.sym, &v.sym);
	METRICS_TABLE(w, python_rows, &v);
}

static const struct metrics_row lua_rows[] = {
	METRICS_FAMILY("autoprof_lua_processes", METRIC_COUNTER,
		       "Lua processes found, by result: supported (Lua frames), unknown_version "
		       "(a release without offsets, or LuaJIT: native frames only), error (its "
		       "release could not be recorded)"),
	METRICS_SAMPLE(struct lua_stats, supported, "result", "supported"),
	METRICS_SAMPLE(struct lua_stats, unknown_version, "result", "unknown_version"),
	METRICS_SAMPLE(struct lua_stats, errors, "result", "error"),
	METRICS_FAMILY("autoprof_lua_samples", METRIC_COUNTER, "Samples with Lua frames"),
	METRICS_SAMPLE(struct lua_stats, samples),
	METRICS_FAMILY("autoprof_lua_frames", METRIC_COUNTER, "Lua frames named in samples"),
	METRICS_SAMPLE(struct lua_stats, frames),
	METRICS_FAMILY("autoprof_lua_errors", METRIC_COUNTER,
		       "Lua frames dropped, left native or placed past a short native walk, by "
		       "reason: function_unreadable (its prototype could not be read: mostly a "
		       "process gone before its samples were drained), mismatch (fewer C-to-Lua "
		       "entries among the native frames than runs of Lua calls: the runs left "
		       "follow them, marked truncated), native_walk_short (the native frames held "
		       "no C-to-Lua entry: the Lua frames follow them, marked truncated), "
		       "lua_walk_short (the walk of the Lua stack stopped short of its bottom: "
		       "the stack ends after its last Lua frames, marked truncated)"),
	METRICS_SAMPLE(struct lua_stats, proto_errors, "reason", "function_unreadable"),
	METRICS_SAMPLE(struct lua_stats, mismatches, "reason", "mismatch"),
	METRICS_SAMPLE(struct lua_stats, short_walks, "reason", "native_walk_short"),
	METRICS_SAMPLE(struct lua_stats, cut_walks, "reason", "lua_walk_short"),
};

static void lua_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct lua_stats s;

	lua__stats(d->ctx.lua, &s);
	METRICS_TABLE(w, lua_rows, &s);
}

static const struct metrics_row file_facts_rows[] = {
	METRICS_FAMILY("autoprof_file_facts_cache_entries", METRIC_GAUGE,
		       "Files whose trace-context facts (TLS variables, GOT slots, Go runtime) are "
		       "kept, by (device, inode, change time, size)"),
	METRICS_SAMPLE(struct tracectx_cache_stats, entries),
	METRICS_FAMILY("autoprof_file_facts_cache_max_entries", METRIC_GAUGE,
		       "Cap on autoprof_file_facts_cache_entries: past it the least recently used "
		       "file makes room"),
	METRICS_SAMPLE(struct tracectx_cache_stats, max_entries),
	METRICS_FAMILY("autoprof_file_facts_lookups", METRIC_COUNTER,
		       "Lookups of a mapped file's facts at each maps read, by result: hit (kept), "
		       "miss (the file read)"),
	METRICS_SAMPLE(struct tracectx_cache_stats, hits, "result", "hit"),
	METRICS_SAMPLE(struct tracectx_cache_stats, misses, "result", "miss"),
	METRICS_FAMILY("autoprof_file_facts_evictions", METRIC_COUNTER,
		       "Files whose facts were dropped to make room"),
	METRICS_SAMPLE(struct tracectx_cache_stats, evictions),
};

/* The history's figures, with whether it runs (storage.path set and usable). */
struct history_view {
	bool enabled;
	struct history_stats s;
};

static const struct metrics_row history_rows[] = {
	METRICS_FAMILY("autoprof_history_enabled", METRIC_GAUGE,
		       "1 when profiles are kept on disk (storage.path set and usable), else 0"),
	METRICS_SAMPLE(struct history_view, enabled),
	METRICS_FAMILY("autoprof_history_files", METRIC_GAUGE, "Files in storage.path"),
	METRICS_SAMPLE(struct history_view, s.files),
	METRICS_FAMILY("autoprof_history_bytes", METRIC_GAUGE,
		       "Bytes of the files in storage.path (bounded by storage.max-bytes)"),
	METRICS_SAMPLE(struct history_view, s.bytes),
	METRICS_FAMILY("autoprof_history_oldest_timestamp_seconds", METRIC_GAUGE,
		       "Unix time of the oldest profile kept on disk, 0 when none is"),
	METRICS_SAMPLE_DIV(struct history_view, s.oldest_ns, 1e9),
	METRICS_FAMILY("autoprof_history_records_written", METRIC_COUNTER,
		       "Records written (one per profile type and flush)"),
	METRICS_SAMPLE(struct history_view, s.records_written),
	METRICS_FAMILY("autoprof_history_written_bytes", METRIC_COUNTER, "Bytes written"),
	METRICS_SAMPLE(struct history_view, s.bytes_written),
	METRICS_FAMILY("autoprof_history_write_errors", METRIC_COUNTER,
		       "Flushes not written (disk full, I/O errors): those seconds stay in "
		       "memory only"),
	METRICS_SAMPLE(struct history_view, s.write_errors),
	METRICS_FAMILY("autoprof_history_records_damaged", METRIC_COUNTER,
		       "Cut or damaged records met while reading (a crash mid-write, a changed "
		       "file): the rest of their file is skipped"),
	METRICS_SAMPLE(struct history_view, s.records_damaged),
	METRICS_FAMILY("autoprof_history_records_read", METRIC_COUNTER,
		       "Records read back for queries"),
	METRICS_SAMPLE(struct history_view, s.records_read),
	METRICS_FAMILY("autoprof_history_files_removed", METRIC_COUNTER,
		       "Files removed, by reason: retention (storage.retention), budget "
		       "(storage.max-bytes)"),
	METRICS_SAMPLE(struct history_view, s.files_removed_retention, "reason", "retention"),
	METRICS_SAMPLE(struct history_view, s.files_removed_budget, "reason", "budget"),
	METRICS_FAMILY("autoprof_history_write_seconds", METRIC_COUNTER,
		       "Time spent writing profiles to disk (naming frames included)"),
	METRICS_SAMPLE_DIV(struct history_view, s.flush_ns_total, 1e9),
};

static void history_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct history_view v = { .enabled = d->history != NULL };

	if (d->history)
		history__stats(d->history, &v.s);
	METRICS_TABLE(w, history_rows, &v);
}

static void file_facts_metrics(struct metrics_writer *w, void *ctx)
{
	struct daemon *d = ctx;
	struct tracectx_cache_stats s;

	if (!d->ctx.tracectx_cache)
		return;
	tracectx_cache__stats(d->ctx.tracectx_cache, &s);
	METRICS_TABLE(w, file_facts_rows, &s);
}

int selfmetrics__register(struct daemon *d)
{
	static const metrics_fn fns[] = {
		build_metrics, oncpu_metrics, offcpu_metrics, store_metrics, proc_metrics,
		symbolizer_metrics, file_metrics, unwind_metrics, memory_metrics, gpumem_metrics,
		jvm_metrics, python_metrics, lua_metrics, file_facts_metrics, history_metrics,
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
