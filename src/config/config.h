/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_CONFIG_H
#define AUTOPROF_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "lib/log.h"

/*
 * Every setting is one row of the key table in config.c (name, type, default, bounds, help).
 * A key "a.b-c" is the flag --a.b-c and the YAML path a: { b-c: ... }. Flags override the file.
 */
struct config {
	char web_listen_address[256];	/* web.listen-address, default ":9740" */
	char config_file[4096];		/* config.file (flag only), "" for none */
	char web_config_file[4096];	/* web.config.file: TLS, basic auth, headers; "" = none */
	uint32_t web_enable_admin_api;	/* web.enable-admin-api, default false */
	uint32_t profile_frequency;	/* profile.frequency, Hz per CPU, default 99, 1..1000 */
	uint64_t profile_retention_ns;	/* profile.retention, default 5m, 10s..24h */
	enum log_level log_level;	/* log.level, default info */
	uint64_t store_memory_limit;	/* store.memory-limit, bytes, default 64MiB, 1MiB..64GiB */
	char storage_path[4096];	/* storage.path, default /var/lib/autoprof, "" = memory only */
	uint64_t storage_retention_ns;	/* storage.retention, default 24h, 1m..31d */
	uint64_t storage_max_bytes;	/* storage.max-bytes, default 1GiB, 256KiB..1TiB */
	uint64_t storage_flush_ns;	/* storage.flush-interval, default 10s, 1s..10s */
	uint64_t symbolizer_cache_size;	/* symbolizer.cache-size, bytes, default 64MiB, 1MiB..64GiB */
	uint64_t symbolizer_debuginfo_idle_ns; /* symbolizer.debuginfo-idle, default 1m, 1s..24h */
	uint64_t bpf_ringbuf_size;	/* bpf.ringbuf-size, bytes, power of two, 64KiB..1GiB; 0: auto */
	char otlp_endpoint[512];	/* otlp.endpoint, "" = no push */
	uint64_t otlp_interval_ns;	/* otlp.interval, default 15s, 1s..1h */
	uint64_t otlp_timeout_ns;	/* otlp.timeout, default 10s, 1s..5m */
	uint32_t otlp_gzip;		/* otlp.gzip, default true */
	char otlp_headers[1024];	/* otlp.headers, Name=value[,Name=value...] */
	uint64_t otlp_queue_size;	/* otlp.queue-size, bytes, default 8MiB, 64KiB..1GiB */
	char otlp_headers_file[4096];	/* otlp.headers-file, "Name: value" lines, "" = none */
	char otlp_ca_file[4096];	/* otlp.ca-file, PEM CA bundle, "" = the system's */
	char otlp_cert_file[4096];	/* otlp.cert-file, PEM client certificate, "" = none */
	char otlp_key_file[4096];	/* otlp.key-file, PEM key of otlp.cert-file */
	uint64_t otlp_shutdown_timeout_ns; /* otlp.shutdown-timeout, default 5s, 0..5m */
	uint32_t offcpu_enabled;	/* offcpu.enabled, default false */
	uint64_t offcpu_min_block_ns;	/* offcpu.min-block, default 50us, 0..1h */
	uint32_t offcpu_sample_ppm;	/* offcpu.sample-probability in millionths, default 1 */
	uint32_t python_enabled;	/* python.enabled, default true */
	uint32_t lua_enabled;		/* lua.enabled, default true */
	uint32_t unwind_mode;		/* unwind.mode, enum config_unwind_mode, default table */
	uint64_t unwind_memory_limit;	/* unwind.memory-limit, bytes, default 16MiB, 64KiB..4GiB */
	uint32_t unwind_walk_cache;	/* unwind.walk-cache, default true */
	char memory_targets[1024];	/* memory.targets, PATTERN[,PATTERN...], "" = none */
	uint64_t memory_sample_interval; /* memory.sample-interval, bytes, default 512KiB, 1B..1GiB */
	uint32_t memory_max_live;	/* memory.max-live, default 65536, 1024..16M */
	uint32_t gpu_enabled;		/* gpu.enabled, default true */
	uint32_t gpu_max_live;		/* gpu.max-live, default 16384, 1024..16M */
	uint64_t gpu_pytorch_sample_interval; /* gpu.pytorch-sample-interval, bytes, default
					       * 512KiB, 1B..1GiB */
	uint32_t jvm_perf_map;		/* jvm.perf-map, default true */
	char probes[4096];		/* probes.attach, /BINARY:FUNCTION[,...], "" = none */
};

enum config_unwind_mode {
	CONFIG_UNWIND_FP = 0,	 /* frame pointers only */
	CONFIG_UNWIND_TABLE = 1, /* .eh_frame tables, frame pointers where there are none */
};

enum config_result {
	CONFIG_OK = 0,
	CONFIG_EXIT_OK = 1,	/* --help or --version was printed: exit 0 */
	CONFIG_INVALID = 2,	/* an error naming the key (and file line) was printed: exit 2 */
};

/* Fills cfg from defaults, then the YAML file (--config.file), then the flags. Errors go to
 * stderr as "autoprof: FILE:LINE: KEY: reason" or "autoprof: --KEY: reason". */
enum config_result config__load(struct config *cfg, int argc, char **argv);
/*
 * Parses s as the numeric key name would be (its parser, bounds and checks) into *v, for
 * settings changed at run time. 0, or -EINVAL with the reason in why.
 */
int config__parse_key(const char *name, const char *s, uint64_t *v, char *why, size_t n);
/* Prints the effective configuration as YAML (for the docs and /api/v1/config). */
void config__print_yaml(const struct config *cfg, FILE *f);

#endif
