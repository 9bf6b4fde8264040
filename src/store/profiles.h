/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_STORE_PROFILES_H
#define AUTOPROF_STORE_PROFILES_H

/*
 * Every profile type is one row of the table in profiles.c: its name, its pprof endpoint and its
 * sample types. A new profile type is a new row plus its collector.
 */
#define PROFILE_MAX_VALUES 4

enum profile_type {
	PROFILE_CPU = 0,
	PROFILE_OFFCPU,
	PROFILE_ALLOCS, /* sampled allocations (memory attach mode) */
	PROFILE_HEAP,	/* live sampled allocations, answered from the collector */
	PROFILE_LATENCY, /* a probe's slow and fast calls side by side (format=diff), never stored */
	PROFILE_GPUALLOCS, /* GPU memory allocations (CUDA), every one */
	PROFILE_GPUHEAP,   /* GPU memory live now, answered from the collector */
	PROFILE__MAX,
};

/* The CUDA API a GPU memory sample came through: its `api` label. */
enum gpu_api {
	GPU_API_NONE = 0,
	GPU_API_RUNTIME,     /* cudaMalloc, cudaMallocPitch, cudaMalloc3D */
	GPU_API_DRIVER,	     /* cuMemAlloc_v2, cuMemAllocPitch_v2 */
	GPU_API_VMM,	     /* cuMemCreate: physical memory for virtual ranges */
	GPU_API_MANAGED,     /* cudaMallocManaged, cuMemAllocManaged */
	GPU_API_ASYNC,	     /* stream-ordered: cudaMallocAsync, cuMemAllocAsync... */
	GPU_API_HOST_PINNED, /* page-locked host memory: cudaMallocHost, cuMemHostAlloc... */
	GPU_API_PYTORCH,     /* PyTorch's caching allocator (tensors inside segments) */
	GPU_API__MAX,
};

/* The label value of api ("runtime"...), or NULL for GPU_API_NONE and unknown values. */
const char *profile__gpu_api_name(unsigned int api);

struct value_type {
	const char *type;
	const char *unit;
	const char *otlp_type; /* the OTLP sample type when its name differs, else NULL */
};

struct profile_desc {
	enum profile_type type;
	const char *name;  /* short name, e.g. "cpu" */
	const char *path;  /* pprof endpoint, e.g. "/debug/pprof/profile" */
	const char *help;  /* one line for the index page */
	unsigned int nr_values;
	struct value_type values[PROFILE_MAX_VALUES];
	struct value_type period_type;
	int default_value; /* index into values for default_sample_type (and the folded
			    * count), -1 for none (folded: the first) */
};

const struct profile_desc *profile__desc(enum profile_type type);
/* The profile type called name (the API's type=), or NULL. */
const struct profile_desc *profile__by_name(const char *name);
/* The profile type served at path, or NULL. */
const struct profile_desc *profile__by_path(const char *path);

#endif
