// SPDX-License-Identifier: GPL-2.0-only
#include <stddef.h>
#include <string.h>

#include "store/profiles.h"

static const struct profile_desc profile_table[PROFILE__MAX] = {
	[PROFILE_CPU] = {
		.type = PROFILE_CPU,
		.name = "cpu",
		.path = "/debug/pprof/profile",
		.help = "on-CPU profile of the last N seconds (?seconds=N&pid=&comm=&format=folded)",
		.nr_values = 2,
		.values = { { "samples", "count" }, { "cpu", "nanoseconds" } },
		.period_type = { "cpu", "nanoseconds" },
		.default_value = -1,
	},
	[PROFILE_OFFCPU] = {
		.type = PROFILE_OFFCPU,
		.name = "offcpu",
		.path = "/debug/pprof/offcpu",
		.help = "off-CPU profile of the last N seconds: where threads blocked, for how long",
		.nr_values = 2,
		/* OpenTelemetry's profiles semantic conventions spell it off_cpu. */
		.values = { { "samples", "count" }, { "offcpu", "nanoseconds", "off_cpu" } },
		.period_type = { "offcpu", "nanoseconds", "off_cpu" },
		/* Flame graphs of waits are read in time, not in number of waits. */
		.default_value = 1,
	},
	/* Go's memory profiles: same four sample types, default chosen as Go does. */
	[PROFILE_ALLOCS] = {
		.type = PROFILE_ALLOCS,
		.name = "allocs",
		.path = "/debug/pprof/allocs",
		.help = "allocations of the last N seconds, sampled (?seconds=N&pid=)",
		.nr_values = 4,
		.values = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
			    { "inuse_objects", "count" }, { "inuse_space", "bytes" } },
		.period_type = { "space", "bytes" },
		.default_value = 1,
	},
	[PROFILE_HEAP] = {
		.type = PROFILE_HEAP,
		.name = "heap",
		.path = "/debug/pprof/heap",
		.help = "live memory now, sampled (?pid=)",
		.nr_values = 4,
		.values = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
			    { "inuse_objects", "count" }, { "inuse_space", "bytes" } },
		.period_type = { "space", "bytes" },
		.default_value = 3,
	},
	/* Not a path of its own: /debug/pprof/profile?probe=ID&format=diff answers it. */
	[PROFILE_LATENCY] = {
		.type = PROFILE_LATENCY,
		.name = "latency",
		.path = "/debug/pprof/profile?format=diff",
		.help = "on-CPU samples inside a probe's slow calls and inside its fast calls",
		.nr_values = 4,
		.values = { { "slow_samples", "count" }, { "slow_cpu", "nanoseconds" },
			    { "fast_samples", "count" }, { "fast_cpu", "nanoseconds" } },
		.period_type = { "cpu", "nanoseconds" },
		.default_value = 1,
	},
	/* GPU memory: every allocation, not sampled; named apart from the heap's so that one
	 * pprof or OTLP consumer never adds the two. */
	[PROFILE_GPUALLOCS] = {
		.type = PROFILE_GPUALLOCS,
		.name = "gpuallocs",
		.path = "/debug/pprof/gpuallocs",
		.help = "GPU memory allocations (CUDA) of the last N seconds (?seconds=N&pid=)",
		.nr_values = 4,
		.values = { { "gpu_alloc_objects", "count" }, { "gpu_alloc_space", "bytes" },
			    { "gpu_inuse_objects", "count" }, { "gpu_inuse_space", "bytes" } },
		.period_type = { "gpu_space", "bytes" },
		.default_value = 1,
	},
	[PROFILE_GPUHEAP] = {
		.type = PROFILE_GPUHEAP,
		.name = "gpuheap",
		.path = "/debug/pprof/gpuheap",
		.help = "GPU memory live now (CUDA), and allocations over the retention (?pid=)",
		.nr_values = 4,
		.values = { { "gpu_alloc_objects", "count" }, { "gpu_alloc_space", "bytes" },
			    { "gpu_inuse_objects", "count" }, { "gpu_inuse_space", "bytes" } },
		.period_type = { "gpu_space", "bytes" },
		.default_value = 3,
	},
};

static const char *const gpu_api_names[GPU_API__MAX] = {
	[GPU_API_RUNTIME] = "runtime",	   [GPU_API_DRIVER] = "driver",
	[GPU_API_VMM] = "vmm",		   [GPU_API_MANAGED] = "managed",
	[GPU_API_ASYNC] = "async",	   [GPU_API_HOST_PINNED] = "host_pinned",
	[GPU_API_PYTORCH] = "pytorch",
};

const char *profile__gpu_api_name(unsigned int api)
{
	return api < GPU_API__MAX ? gpu_api_names[api] : NULL;
}

const struct profile_desc *profile__desc(enum profile_type type)
{
	return (unsigned int)type < PROFILE__MAX ? &profile_table[type] : NULL;
}

const struct profile_desc *profile__by_name(const char *name)
{
	for (unsigned int i = 0; i < PROFILE__MAX; i++)
		if (!strcmp(profile_table[i].name, name))
			return &profile_table[i];
	return NULL;
}

const struct profile_desc *profile__by_path(const char *path)
{
	for (unsigned int i = 0; i < PROFILE__MAX; i++)
		if (!strcmp(profile_table[i].path, path))
			return &profile_table[i];
	return NULL;
}
