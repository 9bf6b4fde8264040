// SPDX-License-Identifier: GPL-2.0-only
/*
 * autoprof: a continuous profiler. Loads the BPF collectors, drains their ring buffers into the
 * store on this (the ingest) thread, and serves pprof, metrics and the API from HTTP threads.
 */
#define pr_fmt(fmt) "main: " fmt

#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sched.h>
#include <linux/sched/types.h>

#include <bpf/libbpf.h>

#include "sample/offcpu.h"
#include "runtime/jvm.h"
#include "memory/memory.h"
#include "gpu/cudafns.h"
#include "gpu/gpumem.h"
#include "history/history.h"
#include "sample/ingest.h"
#include "sample/oncpu.h"
#include "probes/probes.h"
#include "runtime/lua.h"
#include "runtime/python.h"
#include "sample/proc.h"
#include "sample/proccpu.h"
#include "runtime/tracectx.h"
#include "daemon/daemon.h"
#include "http/http.h"
#include "http/webconfig.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/ringsize.h"
#include "lib/timeconst.h"
#include "daemon/privs.h"
#include "store/store.h"
#include "proc/proctab.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"

#define POLL_MS 100
/* Processes with an unwind mapping table (about 6 KiB of kernel memory each, when used). */
#define UNWIND_MAX_PROCESSES 32768
/* Files whose trace-context facts are kept: a host's executables and libraries (~200 bytes each). */
#define TRACECTX_CACHE_FILES 4096

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[1024];

	/* libbpf is chatty at info and debug: both are our debug. */
	if (level != LIBBPF_WARN && log__level() < LOG_DEBUG)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log__printf(level == LIBBPF_WARN ? LOG_WARN : LOG_DEBUG, "%s", msg);
	return 0;
}

/*
 * The ingest loop's work at an exec is small and late is useless: a process's trace context and
 * mappings must be read before its first samples are, within about a millisecond (sample/proc.c).
 * On a host whose CPUs are all busy the fair scheduler let it wait 10-40 ms behind spinning
 * threads. So this thread asks for a short slice: under EEVDF (Linux 6.6+, custom slices from
 * 6.12) a task with a shorter slice gets an earlier deadline and preempts at wake-up, with no
 * more CPU share than before. An older kernel refuses (or ignores) it; nothing else changes.
 */
#define INGEST_SLICE_NS (100 * NSEC_PER_USEC)

/* bpf.ringbuf-size, or (auto) a ring sized to what its profiler sends (lib/ringsize.h). */
static uint64_t ring_size(const struct config *cfg, uint64_t auto_bytes)
{
	return cfg->bpf_ringbuf_size ? cfg->bpf_ringbuf_size : ring__size_for(auto_bytes);
}

/* The ring of a profiler that has work at start (on, or given targets), or none yet. */
static uint64_t ring_size_if(const struct config *cfg, bool busy)
{
	return ring_size(cfg, busy ? RING_BUSY_BYTES : RING_QUIET_BYTES);
}

/*
 * A second of on-CPU samples on every CPU at profile.frequency: a sample of 1 KiB (a deep
 * native stack with its kernel frames; most are a few hundred bytes), and the ring wakes the
 * ingest loop a quarter full.
 */
static uint64_t oncpu_ring_bytes(const struct config *cfg)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	return (uint64_t)(cpus > 0 ? cpus : 1) * cfg->profile_frequency * 1024;
}

static void ingest_prefer_latency(void)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_OTHER,
		/* Threads it starts later (attach helpers, say) get the default again. */
		.sched_flags = SCHED_FLAG_RESET_ON_FORK,
		.sched_nice = getpriority(PRIO_PROCESS, 0),
		.sched_runtime = INGEST_SLICE_NS,
	};

	if (syscall(SYS_sched_setattr, 0, &attr, 0))
		pr_debug("no short scheduler slice for the ingest thread: %s\n", strerror(errno));
}

/* Process events for the collectors that keep per-process state. */
static void ingest_loop(struct daemon *d)
{
	struct collect_ctx *ctx = &d->ctx;
	unsigned long long next_expire = 0, next_sweep = 0, next_copy = 0;
	int wait_ms = POLL_MS;

	while (!stopping) {
		unsigned long long now;
		int err;

		/* Samples and exits do not wake us (their rings are drained on this timer); exec
		 * events and re-reads due do. */
		err = ring_buffer__poll(ctx->rb, wait_ms);
		if (err < 0 && err != -EINTR) {
			pr_err("polling ring buffers: %s\n", strerror(-err));
			break;
		}
		ring_buffer__consume(ctx->rb);
		/* After the drain: the exits it brought spare their re-reads. */
		wait_ms = proc_collector__relearn(d->procs, now_ns(), POLL_MS);
		/*
		 * Only now does /metrics show CPUs sampled, which clients take for "profiling now":
		 * the samples and exec events queued while the collectors loaded (the off-CPU BPF
		 * load alone takes 0.1-1.6 s on a busy machine) are drained, the first sight of
		 * every process on the host with them. An exec event still waiting behind them
		 * leaves the process's first samples without their trace context (proc.c).
		 */
		if (!d->ingesting)
			__atomic_store_n(&d->ingesting, true, __ATOMIC_RELEASE);
		/* Ready once the tables of every process found at start are in (those of
		 * processes started since are built first anyway). */
		if (!d->ready && (!ctx->unwinder || unwinder__built_through(ctx->unwinder,
									     d->scan_mark)))
			__atomic_store_n(&d->ready, true, __ATOMIC_RELEASE);
		proc_collector__reap(d->procs);
		memory__tick(d->memory);
		probes__tick(d->probes);

		now = now_ns();
		if (now >= next_expire) {
			store__expire(ctx->store);
			next_expire = now + NSEC_PER_SEC;
		}
		/* A debug file copied whole goes a step every 100 ms until done (symbolizer.h). */
		if (now >= next_copy && symbolizer__copying(ctx->sym)) {
			symbolizer__copy_step(ctx->sym);
			next_copy = now + 100 * NSEC_PER_MSEC;
		}
		if (now >= next_sweep) {
			proctab__sweep(ctx->proctab);
			python__sweep(ctx->python);
			lua__sweep(ctx->lua);
			symbolizer__trim(ctx->sym);
			if (ctx->unwinder)
				unwinder__maintain(ctx->unwinder);
			next_sweep = now + 10 * NSEC_PER_SEC;
		}
	}
}

/* The history's snapshots of the live sets, from the collectors made after it (read when the
 * writer asks, not before). */
static int live_rows(void *ctx, enum profile_type type, struct store_row **rows, size_t *nr)
{
	struct daemon *d = ctx;
	struct memory *m = __atomic_load_n(&d->memory, __ATOMIC_ACQUIRE);
	struct gpumem *g = __atomic_load_n(&d->gpumem, __ATOMIC_ACQUIRE);

	*rows = NULL;
	*nr = 0;
	if (type == PROFILE_HEAP && m)
		return memory__live_rows(m, NULL, rows, nr);
	if (type == PROFILE_GPUHEAP && g)
		return gpumem__live_rows(g, NULL, rows, nr);
	return 0;
}

int main(int argc, char **argv)
{
	struct daemon d = { .ctx.known_pids_fd = -1, .ctx.tracectx_fd = -1,
			    .ctx.probe_threads_fd = -1, .ctx.python_fd = -1,
			    .ctx.python_threads_fd = -1,
			    .ctx.lua_fd = -1, .ctx.lua_threads_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	char why[512];
	int err, ret = 1;

	/*
	 * Two malloc arenas: glibc's default (8 a CPU) gives each thread that allocates its own,
	 * and each keeps the pages a burst freed (a scrape's symbol loads, a profile's encoding)
	 * resident after it: 3 MiB of RSS after a scrape on 2 CPUs. autoprof's threads are few and
	 * mostly asleep; two arenas spare the ingest thread most contention with the others.
	 */
	mallopt(M_ARENA_MAX, 2);
	/*
	 * Fixed thresholds: glibc raises its mmap threshold to the size of each big block freed
	 * (libdw's inflated sections: megabytes), after which such blocks come from the heap and
	 * their pages stay resident after free until the heap's top is bigger than twice that. A
	 * copied debug file's 12 MB of libdw sections stayed in RSS that way.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	mallopt(M_TRIM_THRESHOLD, 1 << 20);
	switch (config__load(&d.cfg, argc, argv)) {
	case CONFIG_OK:
		break;
	case CONFIG_EXIT_OK:
		return 0;
	default:
		return 2;
	}
	log__set_level(d.cfg.log_level);
	libbpf_set_print(libbpf_print);
	/* A probe that names no function of its binary is a configuration error, found before
	 * anything is attached. */
	if (probes__check_configured(d.cfg.probes, why, sizeof(why))) {
		fprintf(stderr, "autoprof: --probes: %s\n", why);
		return 2;
	}
	/* A bad web config is a configuration error too: exit 2, nothing loaded yet. */
	if (d.cfg.web_config_file[0] &&
	    webconfig__load(d.cfg.web_config_file, &d.web, why, sizeof(why))) {
		fprintf(stderr, "autoprof: --web.config.file: %s\n", why);
		return 2;
	}
	/*
	 * Capabilities belong to a thread, and a thread starts with its creator's: the drop comes
	 * before the first thread (the unwinder's builder, the HTTP server's, the pusher's), so
	 * that none of them keeps more. What loading and attaching need is in the kept set anyway:
	 * uprobes are attached at run time too.
	 */
	if (privs__check() || privs__drop(&d.cfg)) {
		webconfig__free(d.web);
		return 1;
	}

	/* No SA_RESTART: the poll must return at once so that we exit within a second. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	d.ctx.sym = symbolizer__new(&(struct symbolizer_opts){
		.cache_bytes = d.cfg.symbolizer_cache_size,
		.dwarf_idle_ns = d.cfg.symbolizer_debuginfo_idle_ns,
	});
	d.ctx.store = store__new(&(struct store_opts){
		.retention_ns = d.cfg.profile_retention_ns,
		.memory_limit = d.cfg.store_memory_limit,
	});
	d.ctx.proctab = d.ctx.sym ? proctab__new(d.ctx.sym) : NULL;
	d.ctx.cpu = proccpu__new();
	d.ctx.python = d.cfg.python_enabled ? python__new(&d.ctx) : NULL;
	d.ctx.lua = d.cfg.lua_enabled ? lua__new(&d.ctx) : NULL;
	d.ctx.tracectx_cache = tracectx_cache__new(TRACECTX_CACHE_FILES);
	if (!d.ctx.sym || !d.ctx.store || !d.ctx.proctab || !d.ctx.cpu || !d.ctx.tracectx_cache ||
	    (d.cfg.python_enabled && !d.ctx.python) || (d.cfg.lua_enabled && !d.ctx.lua)) {
		pr_err("out of memory\n");
		goto cleanup;
	}
	/* Disk is a bonus: a directory that cannot be used leaves profiles in memory. */
	if (d.cfg.storage_path[0]) {
		err = history__new(&(struct history_opts){ .path = d.cfg.storage_path,
							    .retention_ns = d.cfg.storage_retention_ns,
							    .max_bytes = d.cfg.storage_max_bytes,
							    .flush_ns = d.cfg.storage_flush_ns,
							    .store = d.ctx.store,
							    .sym = d.ctx.sym,
							    .live_rows = live_rows,
							    .live_ctx = &d },
				   &d.history, why, sizeof(why));
		if (err)
			pr_warn("storage.path: %s: profiles are kept in memory only\n", why);
	}
	if (d.cfg.unwind_mode == CONFIG_UNWIND_TABLE) {
		d.ctx.unwinder = unwinder__new(&(struct unwinder_opts){
						       .memory_limit = d.cfg.unwind_memory_limit,
						       .max_processes = UNWIND_MAX_PROCESSES,
						       .walk_cache = d.cfg.unwind_walk_cache,
					       },
					       &err);
		if (!d.ctx.unwinder)
			goto cleanup;
	}
	if (d.cfg.jvm_perf_map) {
		d.jvm = jvm__new(d.ctx.sym, d.ctx.unwinder, &err);
		if (!d.jvm)
			goto cleanup;
	}
	/*
	 * Every listener of a process's life, in the order each is told (proc/proctab.h): what
	 * the samplers' BPF shares (trace contexts, unwind tables), CPU accounts, Python, the
	 * JVM's JIT names, and (once it is made, below) memory targets. Before anything learns a
	 * process: a memory target at start refreshes the maps of the processes it attaches to.
	 */
	err = ingest__observe(&d.ctx) ?: proccpu__observe(d.ctx.cpu, d.ctx.proctab) ?:
	      python__observe(d.ctx.python, d.ctx.proctab) ?:
	      lua__observe(d.ctx.lua, d.ctx.proctab) ?:
	      (d.jvm ? jvm__observe(d.jvm, d.ctx.proctab) : 0);
	if (err)
		goto cleanup;
	err = selfmetrics__register(&d);
	if (err)
		goto cleanup;
	/* Bind before attaching: a busy port must not leave probes behind. */
	err = routes__start(&d);
	if (err)
		goto cleanup;

	d.procs = proc_collector__new(&d.ctx, &err);
	if (!d.procs)
		goto cleanup;
	/* Before the sampler: once /metrics shows CPUs sampled, the memory API answers too. */
	d.memory = memory__new(&(struct memory_opts){
				       .mean_interval = d.cfg.memory_sample_interval,
				       .max_live = d.cfg.memory_max_live,
				       .ringbuf_size = ring_size_if(&d.cfg, d.cfg.memory_targets[0]),
				       .targets = d.cfg.memory_targets,
			       },
			       &d.ctx, &err);
	if (!d.memory)
		goto cleanup;
	err = memory__observe(d.memory, d.ctx.proctab);
	if (err)
		goto cleanup;
	if (d.cfg.gpu_enabled) {
		d.gpumem = gpumem__new(&(struct gpumem_opts){
					       .max_live = d.cfg.gpu_max_live,
					       .ringbuf_size = ring_size(&d.cfg, RING_QUIET_BYTES),
					       .torch_mean = d.cfg.gpu_pytorch_sample_interval,
				       },
				       &d.ctx, &err);
		if (!d.gpumem)
			goto cleanup;
		/* CUDA is often loaded long after exec (PyTorch, ctypes): seen at its dlopen. */
		err = gpumem__observe(d.gpumem, d.ctx.proctab) ?:
		      proc_collector__watch_dlopen(d.procs, cudafn__dlsym_prefixes());
		if (err)
			goto cleanup;
	}
	/* Before the sampler, which shares its map of the calls each thread is in. */
	d.probes = probes__new(&(struct probes_opts){ .ringbuf_size = ring_size_if(&d.cfg,
										    d.cfg.probes[0]) },
			       &d.ctx, &err);
	/* Asked for at start, they must work; otherwise a kernel without them is no error. */
	if (!d.probes && d.cfg.probes[0])
		goto cleanup;
	if (!d.probes)
		pr_warn("latency probes unavailable on this kernel\n");
	err = d.probes ? probes__add_configured(d.probes, d.cfg.probes, why, sizeof(why)) : 0;
	if (err) {
		fprintf(stderr, "autoprof: --probes: %s\n", why);
		goto cleanup;
	}
	d.oncpu = oncpu__new(&(struct oncpu_opts){
				     .frequency = d.cfg.profile_frequency,
				     .ringbuf_size = ring_size(&d.cfg, oncpu_ring_bytes(&d.cfg)),
			     },
			     &d.ctx, &err);
	if (!d.oncpu)
		goto cleanup;
	d.offcpu = offcpu__new(&(struct offcpu_opts){
				       .settings = {
					       .enabled = d.cfg.offcpu_enabled,
					       .min_block_ns = d.cfg.offcpu_min_block_ns,
					       .sample_ppm = d.cfg.offcpu_sample_ppm,
				       },
				       .ringbuf_size = ring_size_if(&d.cfg, d.cfg.offcpu_enabled),
			       },
			       &d.ctx, &err);
	/* Asked for, it must work; off by configuration, a kernel without it is no error. */
	if (!d.offcpu && d.cfg.offcpu_enabled)
		goto cleanup;
	if (!d.offcpu)
		pr_warn("off-CPU profiling unavailable on this kernel\n");
	err = otlp_daemon__start(&d);
	if (err)
		goto cleanup;
	pr_info("autoprof %s: sampling every CPU at %u Hz, serving on %s\n", AUTOPROF_VERSION,
		d.cfg.profile_frequency, d.cfg.web_listen_address);

	/* Every process running now, before the first drain: their mappings (and so their
	 * tables, built meanwhile, and trace contexts) are known before their samples come. */
	pr_info("%u processes found at start\n", proctab__scan(d.ctx.proctab, now_ns()));
	if (d.ctx.unwinder)
		d.scan_mark = unwinder__queue_mark(d.ctx.unwinder);
	ingest_prefer_latency();
	ingest_loop(&d);
	pr_info("stopping\n");
	ret = 0;

cleanup:
	/* The pusher reads the store and symbolizer: stop it first. */
	otlp_daemon__stop(&d);
	http_server__stop(d.http);
	/* Writes the seconds since its last flush: the store and symbolizer are still here. */
	history__free(d.history);
	/* The manager maps the collectors' rings: unmap before their maps go. */
	ring_buffer__free(d.ctx.rb);
	oncpu__free(d.oncpu);
	offcpu__free(d.offcpu);
	memory__free(d.memory);
	gpumem__free(d.gpumem);
	probes__free(d.probes);
	proc_collector__free(d.procs);
	metrics__unregister_all();
	/* Before the symbolizer: its thread hands maps to JIT dsos. */
	jvm__free(d.jvm);
	proctab__free(d.ctx.proctab);
	unwinder__free(d.ctx.unwinder);
	proccpu__free(d.ctx.cpu);
	python__free(d.ctx.python);
	lua__free(d.ctx.lua);
	tracectx_cache__free(d.ctx.tracectx_cache);
	store__free(d.ctx.store);
	symbolizer__free(d.ctx.sym);
	webconfig__free(d.web);
	return ret;
}
