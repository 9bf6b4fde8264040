// SPDX-License-Identifier: GPL-2.0-only
#define pr_fmt(fmt) "otlp: " fmt

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "opentelemetry/proto/common/v1/common.pb-c.h"
#include "opentelemetry/proto/profiles/v1development/profiles.pb-c.h"
#include "opentelemetry/proto/resource/v1/resource.pb-c.h"

#include "lib/hash.h"
#include "lib/log.h"
#include "lib/strtab.h"
#include "lib/timeconst.h"
#include "store/profiles.h"
#include "store/store.h"
#include "symbolize/dso.h"
#include "symbolize/symbolizer.h"
#include "export/intern.h"
#include "export/otlp.h"

/* The generated names run past 60 characters; these keep the code within 100 columns. */
typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_kv;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles pb_rprof;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles pb_sprof;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dict;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType pb_vt;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line pb_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__Link pb_link;
typedef Opentelemetry__Proto__Profiles__V1development__Stack pb_stack;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_attr;

#define ANY_STRING OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
#define ANY_INT	   OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE

/* The same for the generated functions. */
#define PROF(fn)      opentelemetry__proto__profiles__v1development__##fn
#define COMMON(fn)    opentelemetry__proto__common__v1__##fn
#define COLLECTOR(fn) opentelemetry__proto__collector__profiles__v1development__##fn
#define REQ(fn)	      COLLECTOR(export_profiles_service_request__##fn)

#define PROFILE_ID_LEN 16

enum { KEY_THREAD_NAME, KEY_THREAD_ID, KEY_FRAME_TYPE, KEY_BUILD_ID, KEY_GPU, KEY_API, NR_KEYS };

static const char *const key_names[NR_KEYS] = {
	[KEY_THREAD_NAME] = "thread.name",
	[KEY_THREAD_ID] = "thread.id",
	[KEY_FRAME_TYPE] = "profile.frame.type",
	[KEY_BUILD_ID] = "process.executable.build_id.gnu",
	/* GPU memory samples: named as their pprof labels, which Pyroscope makes of them. */
	[KEY_GPU] = "gpu",
	[KEY_API] = "api",
};

enum attr_kind { ATTR_STRING, ATTR_INT };

/* A dictionary attribute; no padding, so it hashes as bytes. */
struct otlp_attr {
	uint32_t key;	/* into enc.st */
	uint32_t kind;	/* enum attr_kind */
	int64_t val;	/* the integer, or an index into otlp_enc.vals */
};

struct otlp_stack {
	uint32_t off;	/* into otlp_enc.stack_locs */
	uint32_t len;
};

struct otlp_stack_key {
	const int32_t *locs;
	uint32_t len;
};

#define NR_SAMPLE_ATTRS 4

/* The identity a sample is merged on; no padding, so it hashes as bytes. */
struct otlp_sample_key {
	uint32_t proc;
	uint32_t res;
	uint32_t stack;
	uint32_t nr_attrs;
	int32_t attrs[NR_SAMPLE_ATTRS];
	uint32_t link; /* index into link_table, 0 = no span */
};

struct otlp_sample {
	struct otlp_sample_key k;
	uint64_t values[PROFILE_MAX_VALUES];
};

/*
 * One process image: a pid with one executable, path, container and service. A process that
 * exec()ed or moved mid-window is two (the pid alike): each of its rows goes under the
 * Resource that describes it, never under the other image's name.
 */
struct otlp_proc {
	uint32_t pid;
	const char *exe;
	const char *exe_path;
	const char *container_id;
	const char *service;
};

/* Everything deduplicated before a single message is built. */
struct otlp_enc {
	struct enc e;
	/*
	 * Attribute string values (thread names) live apart from the dictionary's string table,
	 * which would only carry them as dead weight.
	 */
	struct strtab *vals;
	int64_t keys[NR_KEYS];
	struct otlp_attr *attrs;
	uint32_t nr_attrs, cap_attrs;
	struct htab attr_ht;
	struct otlp_stack *stacks;
	uint32_t nr_stacks, cap_stacks;
	struct htab stack_ht;
	int32_t *stack_locs;
	uint32_t nr_stack_locs, cap_stack_locs;
	int32_t *tmp_locs;	/* the stack of the row at hand */
	uint32_t cap_tmp_locs;
	struct otlp_sample *samples;
	uint32_t nr_samples, cap_samples;
	struct htab sample_ht;
	uint8_t (*links)[24]; /* trace_id then span_id; link_table[i + 1] */
	uint32_t nr_links, cap_links;
	struct htab link_ht;
	struct otlp_proc *procs;
	uint32_t nr_procs, cap_procs;
	struct htab proc_ht;
};

static int otlp_enc__init(struct otlp_enc *o, struct symbolizer *sym)
{
	int err;

	memset(o, 0, sizeof(*o));
	err = enc__init(&o->e, sym);
	if (err)
		return err;
	err = -ENOMEM;
	o->vals = strtab__new();
	if (!o->vals)
		goto out_enc;
	for (int i = 0; i < NR_KEYS; i++) {
		o->keys[i] = enc__intern(&o->e, key_names[i]);
		if (o->keys[i] < 0)
			goto out_vals;
	}
	return 0;
out_vals:
	strtab__free(o->vals);
out_enc:
	enc__exit(&o->e);
	return err;
}

static void otlp_enc__exit(struct otlp_enc *o)
{
	htab__free(&o->attr_ht);
	htab__free(&o->stack_ht);
	htab__free(&o->sample_ht);
	htab__free(&o->link_ht);
	free(o->links);
	htab__free(&o->proc_ht);
	free(o->attrs);
	free(o->stacks);
	free(o->stack_locs);
	free(o->tmp_locs);
	free(o->samples);
	free(o->procs);
	strtab__free(o->vals);
	enc__exit(&o->e);
}

static bool otlp_attr__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_enc *o = ctx;

	return !memcmp(&o->attrs[idx], key, sizeof(struct otlp_attr));
}

/* Returns the attribute table index (>= 1, 0 is the zero value) or a negative errno. */
static int64_t otlp__attr(struct otlp_enc *o, unsigned int key, enum attr_kind kind, int64_t ival,
			  const char *sval)
{
	struct otlp_attr a = { .key = o->keys[key], .kind = kind, .val = ival };
	struct otlp_attr *attrs;
	struct hslot *slot;
	uint64_t h;

	if (kind == ATTR_STRING) {
		a.val = strtab__intern(o->vals, sval);
		if (a.val < 0)
			return a.val;
	}
	h = hash__bytes(&a, sizeof(a), 0);
	if (htab__reserve(&o->attr_ht))
		return -ENOMEM;
	slot = htab__find(&o->attr_ht, h, otlp_attr__eq, o, &a);
	if (slot->idx)
		return slot->idx;
	attrs = array__grow(o->attrs, &o->cap_attrs, o->nr_attrs + 1, sizeof(*o->attrs));
	if (!attrs)
		return -ENOMEM;
	o->attrs = attrs;
	o->attrs[o->nr_attrs] = a;
	htab__insert(&o->attr_ht, slot, h, o->nr_attrs);
	return ++o->nr_attrs;
}

static bool otlp_stack__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_enc *o = ctx;
	const struct otlp_stack_key *k = key;
	const struct otlp_stack *s = &o->stacks[idx];

	return s->len == k->len &&
	       !memcmp(&o->stack_locs[s->off], k->locs, (size_t)k->len * sizeof(*k->locs));
}

/*
 * Returns the stack table index of the row's frames (0, the empty stack, for none), or a
 * negative errno. Symbolizes each frame the first time it is seen.
 */
static int64_t otlp__stack(struct otlp_enc *o, const struct store_row *row)
{
	struct otlp_stack_key k = { .len = row->nr_frames };
	struct otlp_stack *stacks;
	struct hslot *slot;
	int32_t *locs;
	uint64_t h;
	uint32_t i;

	if (!row->nr_frames)
		return 0;
	locs = array__grow(o->tmp_locs, &o->cap_tmp_locs, row->nr_frames, sizeof(*locs));
	if (!locs)
		return -ENOMEM;
	o->tmp_locs = locs;
	for (i = 0; i < row->nr_frames; i++) {
		int64_t loc = enc__location(&o->e, &row->frames[i]);

		if (loc < 0)
			return loc;
		/* Index 0 of the location table is the zero value: shift by one. */
		locs[i] = (int32_t)(loc + 1);
	}
	k.locs = locs;
	h = hash__bytes(locs, (size_t)k.len * sizeof(*locs), 0);
	if (htab__reserve(&o->stack_ht))
		return -ENOMEM;
	slot = htab__find(&o->stack_ht, h, otlp_stack__eq, o, &k);
	if (slot->idx)
		return slot->idx;
	stacks = array__grow(o->stacks, &o->cap_stacks, o->nr_stacks + 1, sizeof(*o->stacks));
	if (!stacks)
		return -ENOMEM;
	o->stacks = stacks;
	locs = array__grow(o->stack_locs, &o->cap_stack_locs, o->nr_stack_locs + k.len,
			   sizeof(*o->stack_locs));
	if (!locs)
		return -ENOMEM;
	o->stack_locs = locs;
	memcpy(&o->stack_locs[o->nr_stack_locs], k.locs, (size_t)k.len * sizeof(*k.locs));
	o->stacks[o->nr_stacks] = (struct otlp_stack){ o->nr_stack_locs, k.len };
	o->nr_stack_locs += k.len;
	htab__insert(&o->stack_ht, slot, h, o->nr_stacks);
	return ++o->nr_stacks;
}

/* NULL and "" alike: a field the process does not have. */
static const char *field(const char *s)
{
	return s ? s : "";
}

static uint64_t hash_field(const char *s, uint64_t seed)
{
	s = field(s);
	return hash__bytes(s, strlen(s), seed);
}

static bool otlp_proc__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_enc *o = ctx;
	const struct otlp_proc *p = &o->procs[idx];
	const struct store_row *row = key;

	return p->pid == row->pid && !strcmp(field(p->exe), field(row->exe)) &&
	       !strcmp(field(p->exe_path), field(row->exe_path)) &&
	       !strcmp(field(p->container_id), field(row->container_id)) &&
	       !strcmp(field(p->service), field(row->service));
}

/* Returns the index of the row's process image, or a negative errno. */
static int64_t otlp__proc(struct otlp_enc *o, const struct store_row *row)
{
	uint64_t h = hash__u64(row->pid);
	struct otlp_proc *procs, *p;
	struct hslot *slot;

	h = hash_field(row->exe, h);
	h = hash_field(row->exe_path, h);
	h = hash_field(row->container_id, h);
	h = hash_field(row->service, h);
	if (htab__reserve(&o->proc_ht))
		return -ENOMEM;
	slot = htab__find(&o->proc_ht, h, otlp_proc__eq, o, row);
	if (slot->idx) {
		p = &o->procs[slot->idx - 1];
	} else {
		procs = array__grow(o->procs, &o->cap_procs, o->nr_procs + 1, sizeof(*o->procs));
		if (!procs)
			return -ENOMEM;
		o->procs = procs;
		p = &o->procs[o->nr_procs];
		memset(p, 0, sizeof(*p));
		p->pid = row->pid;
		p->exe = row->exe;
		p->exe_path = row->exe_path;
		p->container_id = row->container_id;
		p->service = row->service;
		htab__insert(&o->proc_ht, slot, h, o->nr_procs++);
	}
	return p - o->procs;
}

static bool otlp_sample__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_enc *o = ctx;

	return !memcmp(&o->samples[idx].k, key, sizeof(struct otlp_sample_key));
}

static bool otlp_link__eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_enc *o = ctx;

	return !memcmp(o->links[idx], key, sizeof(o->links[idx]));
}

/* The link_table index of the row's span (deduplicated), 0 when it has none. */
static int64_t otlp__link(struct otlp_enc *o, const struct store_row *row)
{
	uint8_t key[24];
	struct hslot *slot;
	void *links;
	uint64_t h;

	if (!row->trace_id)
		return 0;
	memcpy(key, row->trace_id, 16);
	memcpy(key + 16, row->span_id, 8);
	h = hash__bytes(key, sizeof(key), 7);
	if (htab__reserve(&o->link_ht))
		return -ENOMEM;
	slot = htab__find(&o->link_ht, h, otlp_link__eq, o, key);
	if (slot->idx)
		return slot->idx;
	links = array__grow(o->links, &o->cap_links, o->nr_links + 1, sizeof(*o->links));
	if (!links)
		return -ENOMEM;
	o->links = links;
	memcpy(o->links[o->nr_links], key, sizeof(key));
	htab__insert(&o->link_ht, slot, h, o->nr_links);
	return ++o->nr_links;
}

/* Adds row (of result res) to its process's samples, merging it into one of equal identity. */
static int otlp__row(struct otlp_enc *o, uint32_t res, const struct store_row *row,
		     unsigned int nr_values)
{
	struct otlp_sample_key k;
	struct otlp_sample *samples, *s;
	struct hslot *slot;
	int64_t proc, stack, attr;
	unsigned int i;
	uint64_t h;

	proc = otlp__proc(o, row);
	if (proc < 0)
		return proc;
	stack = otlp__stack(o, row);
	if (stack < 0)
		return stack;
	memset(&k, 0, sizeof(k));
	k.proc = proc;
	k.res = res;
	k.stack = stack;
	if (row->comm && row->comm[0]) {
		attr = otlp__attr(o, KEY_THREAD_NAME, ATTR_STRING, 0, row->comm);
		if (attr < 0)
			return attr;
		k.attrs[k.nr_attrs++] = attr;
	}
	attr = otlp__attr(o, KEY_THREAD_ID, ATTR_INT, row->tid, NULL);
	if (attr < 0)
		return attr;
	k.attrs[k.nr_attrs++] = attr;
	if (row->gpu) {
		attr = otlp__attr(o, KEY_GPU, ATTR_INT, row->gpu - 1, NULL);
		if (attr < 0)
			return attr;
		k.attrs[k.nr_attrs++] = attr;
	}
	if (profile__gpu_api_name(row->gpu_api)) {
		attr = otlp__attr(o, KEY_API, ATTR_STRING, 0, profile__gpu_api_name(row->gpu_api));
		if (attr < 0)
			return attr;
		k.attrs[k.nr_attrs++] = attr;
	}
	attr = otlp__link(o, row);
	if (attr < 0)
		return attr;
	k.link = (uint32_t)attr;

	h = hash__bytes(&k, sizeof(k), 0);
	if (htab__reserve(&o->sample_ht))
		return -ENOMEM;
	slot = htab__find(&o->sample_ht, h, otlp_sample__eq, o, &k);
	if (slot->idx) {
		s = &o->samples[slot->idx - 1];
	} else {
		samples = array__grow(o->samples, &o->cap_samples, o->nr_samples + 1,
				      sizeof(*o->samples));
		if (!samples)
			return -ENOMEM;
		o->samples = samples;
		s = &o->samples[o->nr_samples];
		memset(s, 0, sizeof(*s));
		s->k = k;
		htab__insert(&o->sample_ht, slot, h, o->nr_samples++);
	}
	for (i = 0; i < nr_values; i++)
		s->values[i] += row->values[i];
	return 0;
}

/* Every protobuf-c message of one request, allocated as a handful of arrays. */
struct otlp_pb {
	pb_request req;
	pb_dict dict;
	pb_scope scope;
	/* dictionary */
	pb_mapping *maps;
	pb_mapping **maps_p;
	int32_t *map_attrs;
	pb_location *locs;
	pb_location **locs_p;
	int32_t *loc_attrs;
	pb_line *lines;
	pb_line **lines_p;
	pb_function *funcs;
	pb_function **funcs_p;
	pb_link *links;
	pb_link **links_p;
	pb_attr *attrs;
	pb_attr **attrs_p;
	pb_any *attr_vals;
	pb_stack *stacks;
	pb_stack **stacks_p;
	/* per result: its sample types, then its period type */
	pb_vt *vts;
	uint32_t *vt_first;
	/* per process */
	pb_rprof *rprofs;
	pb_rprof **rprofs_p;
	pb_resource *resources;
	pb_kv *kvs;
	pb_kv **kvs_p;
	pb_any *kv_vals;
	pb_sprof *sprofs;
	pb_sprof **sprofs_p;
	/* profiles and their samples */
	pb_profile *profs;
	pb_profile **profs_p;
	uint8_t *profile_ids;
	pb_sample *samples;
	pb_sample **samples_p;
	int64_t *values;
	uint32_t *order;	/* otlp_enc.samples indices grouped by (process, result) */
	uint32_t *group_first;	/* per (process, result): first position in order */
};

static void otlp_pb__free(struct otlp_pb *pb)
{
	free(pb->maps);
	free(pb->maps_p);
	free(pb->map_attrs);
	free(pb->locs);
	free(pb->locs_p);
	free(pb->loc_attrs);
	free(pb->lines);
	free(pb->lines_p);
	free(pb->funcs);
	free(pb->funcs_p);
	free(pb->attrs);
	free(pb->attrs_p);
	free(pb->attr_vals);
	free(pb->stacks);
	free(pb->stacks_p);
	free(pb->vts);
	free(pb->vt_first);
	free(pb->rprofs);
	free(pb->rprofs_p);
	free(pb->resources);
	free(pb->kvs);
	free(pb->kvs_p);
	free(pb->kv_vals);
	free(pb->sprofs);
	free(pb->sprofs_p);
	free(pb->profs);
	free(pb->profs_p);
	free(pb->profile_ids);
	free(pb->samples);
	free(pb->links);
	free(pb->links_p);
	free(pb->samples_p);
	free(pb->values);
	free(pb->order);
	free(pb->group_first);
}

/*
 * Interns the attributes that the location and mapping tables need: after this, the string
 * and attribute tables are complete.
 */
static int otlp__table_attrs(struct otlp_enc *o, struct otlp_pb *pb)
{
	/* The frame types of runtimes' frames, by their dso's kind (the semantic conventions'
	 * profile.frame.type values); every other user frame is native. */
	static const struct {
		enum dso_kind kind;
		const char *type;
	} runtimes[] = {
		{ DSO_PYTHON, "cpython" },
		{ DSO_LUA, "lua" },
		{ DSO_JAVA, "jvm" },
	};
	int64_t kernel, native, typed[3] = { -1, -1, -1 }, a;
	uint32_t i;

	_Static_assert(sizeof(typed) / sizeof(typed[0]) == sizeof(runtimes) / sizeof(runtimes[0]),
		       "one attribute per runtime");
	pb->loc_attrs = array__alloc(o->e.nr_locs, sizeof(*pb->loc_attrs));
	pb->map_attrs = array__alloc(o->e.nr_maps, sizeof(*pb->map_attrs));
	if (!pb->loc_attrs || !pb->map_attrs)
		return -ENOMEM;
	kernel = otlp__attr(o, KEY_FRAME_TYPE, ATTR_STRING, 0, "kernel");
	native = otlp__attr(o, KEY_FRAME_TYPE, ATTR_STRING, 0, "native");
	if (kernel < 0 || native < 0)
		return -ENOMEM;
	for (i = 0; i < o->e.nr_locs; i++) {
		const struct dso *dso = o->e.locs[i].dso;
		enum dso_kind kind = dso ? dso__kind(dso) : DSO_ELF;

		pb->loc_attrs[i] = kind == DSO_KERNEL ? kernel : native;
		for (size_t r = 0; r < sizeof(runtimes) / sizeof(runtimes[0]); r++) {
			if (kind != runtimes[r].kind)
				continue;
			/* Interned at its first use: a profile without that runtime keeps its
			 * table as it was. */
			if (typed[r] < 0) {
				typed[r] = otlp__attr(o, KEY_FRAME_TYPE, ATTR_STRING, 0,
						      runtimes[r].type);
				if (typed[r] < 0)
					return typed[r];
			}
			pb->loc_attrs[i] = typed[r];
		}
	}
	for (i = 0; i < o->e.nr_maps; i++) {
		const char *build_id = dso__build_id(o->e.maps[i].dso);

		if (!build_id || !build_id[0])
			continue;
		a = otlp__attr(o, KEY_BUILD_ID, ATTR_STRING, 0, build_id);
		if (a < 0)
			return a;
		pb->map_attrs[i] = a;
	}
	return 0;
}

/* Builds the dictionary: every table with its zero value at index 0. */
static int otlp__dictionary(const struct otlp_enc *o, struct otlp_pb *pb)
{
	const struct enc *e = &o->e;
	pb_dict *d = &pb->dict;
	uint32_t i;

	pb->maps = array__alloc(e->nr_maps + 1, sizeof(*pb->maps));
	pb->maps_p = array__alloc(e->nr_maps + 1, sizeof(*pb->maps_p));
	pb->locs = array__alloc(e->nr_locs + 1, sizeof(*pb->locs));
	pb->locs_p = array__alloc(e->nr_locs + 1, sizeof(*pb->locs_p));
	pb->lines = array__alloc(e->nr_lines, sizeof(*pb->lines));
	pb->lines_p = array__alloc(e->nr_lines, sizeof(*pb->lines_p));
	pb->funcs = array__alloc(e->nr_funcs + 1, sizeof(*pb->funcs));
	pb->funcs_p = array__alloc(e->nr_funcs + 1, sizeof(*pb->funcs_p));
	pb->attrs = array__alloc(o->nr_attrs + 1, sizeof(*pb->attrs));
	pb->attrs_p = array__alloc(o->nr_attrs + 1, sizeof(*pb->attrs_p));
	pb->attr_vals = array__alloc(o->nr_attrs + 1, sizeof(*pb->attr_vals));
	pb->stacks = array__alloc(o->nr_stacks + 1, sizeof(*pb->stacks));
	pb->stacks_p = array__alloc(o->nr_stacks + 1, sizeof(*pb->stacks_p));
	if (!pb->maps || !pb->maps_p || !pb->locs || !pb->locs_p || !pb->lines || !pb->lines_p ||
	    !pb->funcs || !pb->funcs_p || !pb->attrs || !pb->attrs_p || !pb->attr_vals ||
	    !pb->stacks || !pb->stacks_p)
		return -ENOMEM;

	for (i = 0; i <= e->nr_maps; i++) {
		pb_mapping *m = &pb->maps[i];

		PROF(mapping__init)(m);
		pb->maps_p[i] = m;
		if (!i)
			continue;
		/*
		 * Frame addresses are file offsets, kernel or process virtual addresses (see
		 * frame.h), so only a mapping spanning everything contains them all.
		 */
		m->memory_limit = UINT64_MAX;
		m->filename_strindex = e->maps[i - 1].filename;
		if (pb->map_attrs[i - 1]) {
			m->attribute_indices = &pb->map_attrs[i - 1];
			m->n_attribute_indices = 1;
		}
	}
	for (i = 0; i < e->nr_lines; i++) {
		pb_line *l = &pb->lines[i];

		PROF(line__init)(l);
		l->function_index = e->lines[i].func + 1;
		l->line = e->lines[i].line;
		pb->lines_p[i] = l;
	}
	for (i = 0; i <= e->nr_locs; i++) {
		pb_location *l = &pb->locs[i];
		const struct enc_loc *el;

		PROF(location__init)(l);
		pb->locs_p[i] = l;
		if (!i)
			continue;
		el = &e->locs[i - 1];
		l->mapping_index = el->mapping;
		l->address = el->addr;
		/* Symbolized lines come innermost first, which is the order OTLP wants. */
		l->lines = &pb->lines_p[el->first_line];
		l->n_lines = el->nr_lines;
		l->attribute_indices = &pb->loc_attrs[i - 1];
		l->n_attribute_indices = 1;
	}
	for (i = 0; i <= e->nr_funcs; i++) {
		pb_function *f = &pb->funcs[i];

		PROF(function__init)(f);
		pb->funcs_p[i] = f;
		if (!i)
			continue;
		f->name_strindex = e->funcs[i - 1].name;
		f->system_name_strindex = e->funcs[i - 1].system_name;
		f->filename_strindex = e->funcs[i - 1].file;
	}
	for (i = 0; i <= o->nr_attrs; i++) {
		pb_attr *a = &pb->attrs[i];
		pb_any *v = &pb->attr_vals[i];
		const struct otlp_attr *oa;

		PROF(key_value_and_unit__init)(a);
		pb->attrs_p[i] = a;
		if (!i)
			continue;
		oa = &o->attrs[i - 1];
		COMMON(any_value__init)(v);
		a->key_strindex = oa->key;
		a->value = v;
		if (oa->kind == ATTR_STRING) {
			v->value_case = ANY_STRING;
			v->string_value = (char *)strtab__str(o->vals, oa->val);
		} else {
			v->value_case = ANY_INT;
			v->int_value = oa->val;
		}
	}
	for (i = 0; i <= o->nr_stacks; i++) {
		pb_stack *s = &pb->stacks[i];

		PROF(stack__init)(s);
		pb->stacks_p[i] = s;
		if (!i)
			continue;
		s->location_indices = &o->stack_locs[o->stacks[i - 1].off];
		s->n_location_indices = o->stacks[i - 1].len;
	}
	pb->links = array__alloc(o->nr_links + 1, sizeof(*pb->links));
	pb->links_p = array__alloc(o->nr_links + 1, sizeof(*pb->links_p));
	if (!pb->links || !pb->links_p)
		return -ENOMEM;
	for (i = 0; i <= o->nr_links; i++) {
		pb_link *l = &pb->links[i];

		PROF(link__init)(l);
		pb->links_p[i] = l;
		/* Index 0 is the all-zero link: no span. */
		if (!i)
			continue;
		l->trace_id = (ProtobufCBinaryData){ 16, o->links[i - 1] };
		l->span_id = (ProtobufCBinaryData){ 8, o->links[i - 1] + 16 };
	}

	PROF(profiles_dictionary__init)(d);
	d->mapping_table = pb->maps_p;
	d->n_mapping_table = e->nr_maps + 1;
	d->location_table = pb->locs_p;
	d->n_location_table = e->nr_locs + 1;
	d->function_table = pb->funcs_p;
	d->n_function_table = e->nr_funcs + 1;
	d->link_table = pb->links_p;
	d->n_link_table = o->nr_links + 1;
	d->attribute_table = pb->attrs_p;
	d->n_attribute_table = o->nr_attrs + 1;
	d->stack_table = pb->stacks_p;
	d->n_stack_table = o->nr_stacks + 1;
	/* Only now is the string table complete: interning may move the array. */
	d->string_table = strtab__array(e->st);
	d->n_string_table = strtab__count(e->st);
	return 0;
}

/* The sample types and period type of every result, shared by every process's profiles. */
static int otlp__value_types(struct otlp_enc *o, const struct store_result *const *results,
			     size_t nr_results, struct otlp_pb *pb)
{
	uint32_t total = 0, i, j;

	pb->vt_first = array__alloc(nr_results, sizeof(*pb->vt_first));
	if (!pb->vt_first)
		return -ENOMEM;
	for (i = 0; i < nr_results; i++) {
		pb->vt_first[i] = total;
		total += profile__desc(results[i]->type)->nr_values + 1;
	}
	pb->vts = array__alloc(total, sizeof(*pb->vts));
	if (!pb->vts)
		return -ENOMEM;
	for (i = 0; i < nr_results; i++) {
		const struct profile_desc *desc = profile__desc(results[i]->type);

		for (j = 0; j <= desc->nr_values; j++) {
			const struct value_type *in =
				j < desc->nr_values ? &desc->values[j] : &desc->period_type;
			pb_vt *vt = &pb->vts[pb->vt_first[i] + j];
			int64_t type = enc__intern(&o->e, in->otlp_type ? in->otlp_type : in->type);
			int64_t unit = enc__intern(&o->e, in->unit);

			if (type < 0 || unit < 0)
				return -ENOMEM;
			PROF(value_type__init)(vt);
			vt->type_strindex = type;
			vt->unit_strindex = unit;
		}
	}
	return 0;
}

/* Profile IDs must be unique and not all zero; fall back to a hash when the pool is not ready. */
static void otlp__profile_ids(uint8_t *ids, size_t n)
{
	static uint64_t counter;
	struct timespec ts;
	size_t len = n * PROFILE_ID_LEN, i;
	ssize_t got = len ? getrandom(ids, len, GRND_NONBLOCK) : 0;

	if (got < 0 || (size_t)got != len) {
		clock_gettime(CLOCK_REALTIME, &ts);
		for (i = 0; i < len; i += sizeof(uint64_t)) {
			uint64_t x = hash__u64((uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec +
					       __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));

			memcpy(&ids[i], &x, sizeof(x));
		}
	}
	for (i = 0; i < n; i++) {
		uint8_t *id = &ids[i * PROFILE_ID_LEN], any = 0;

		for (size_t j = 0; j < PROFILE_ID_LEN; j++)
			any |= id[j];
		if (!any)
			id[PROFILE_ID_LEN - 1] = 1;
	}
}

enum { RES_HOST, RES_PID, RES_EXE, RES_EXE_PATH, RES_CONTAINER, RES_SERVICE, NR_RES_ATTRS };

static void kv__string(pb_kv *kv, pb_any *v, const char *key, const char *s)
{
	COMMON(key_value__init)(kv);
	COMMON(any_value__init)(v);
	kv->key = (char *)key;
	kv->value = v;
	v->value_case = ANY_STRING;
	v->string_value = (char *)s;
}

static void kv__int(pb_kv *kv, pb_any *v, const char *key, int64_t i)
{
	COMMON(key_value__init)(kv);
	COMMON(any_value__init)(v);
	kv->key = (char *)key;
	kv->value = v;
	v->value_case = ANY_INT;
	v->int_value = i;
}

/* One Resource per process image, describing the host and the process. */
static void otlp__resource(const struct otlp_proc *p, const struct otlp_host *host,
			   pb_resource *r, pb_kv *kvs, pb_kv **kvs_p, pb_any *vals)
{
	size_t n = 0;

	opentelemetry__proto__resource__v1__resource__init(r);
	r->attributes = kvs_p;
	if (host && host->host_name && host->host_name[0]) {
		kv__string(&kvs[n], &vals[n], "host.name", host->host_name);
		kvs_p[n] = &kvs[n];
		n++;
	}
	kv__int(&kvs[n], &vals[n], "process.pid", p->pid);
	kvs_p[n] = &kvs[n];
	n++;
	if (p->exe && p->exe[0]) {
		kv__string(&kvs[n], &vals[n], "process.executable.name", p->exe);
		kvs_p[n] = &kvs[n];
		n++;
	}
	if (p->exe_path && p->exe_path[0]) {
		kv__string(&kvs[n], &vals[n], "process.executable.path", p->exe_path);
		kvs_p[n] = &kvs[n];
		n++;
	}
	if (p->container_id && p->container_id[0]) {
		kv__string(&kvs[n], &vals[n], "container.id", p->container_id);
		kvs_p[n] = &kvs[n];
		n++;
	}
	if (p->service && p->service[0]) {
		kv__string(&kvs[n], &vals[n], "service.name", p->service);
		kvs_p[n] = &kvs[n];
		n++;
	}
	r->n_attributes = n;
}

static size_t sample__group(const struct otlp_sample *s, size_t nr_results)
{
	return (size_t)s->k.proc * nr_results + s->k.res;
}

/*
 * Groups the merged samples by (process, result), keeping their order of first appearance
 * inside each group, so that each profile's samples are one contiguous run.
 */
static int otlp__group(const struct otlp_enc *o, size_t nr_results, struct otlp_pb *pb)
{
	size_t nr_groups = (size_t)o->nr_procs * nr_results, g;
	uint32_t *next, i, pos = 0;

	pb->order = array__alloc(o->nr_samples, sizeof(*pb->order));
	pb->group_first = array__alloc(nr_groups + 1, sizeof(*pb->group_first));
	next = array__alloc(nr_groups, sizeof(*next));
	if (!pb->order || !pb->group_first || !next) {
		free(next);
		return -ENOMEM;
	}
	for (i = 0; i < o->nr_samples; i++)
		next[sample__group(&o->samples[i], nr_results)]++;
	for (g = 0; g < nr_groups; g++) {
		uint32_t count = next[g];

		pb->group_first[g] = next[g] = pos;
		pos += count;
	}
	pb->group_first[nr_groups] = pos;
	for (i = 0; i < o->nr_samples; i++)
		pb->order[next[sample__group(&o->samples[i], nr_results)]++] = i;
	free(next);
	return 0;
}

/* Builds the ResourceProfiles: one per process, one Profile per sample type of each result. */
static int otlp__resources(const struct otlp_enc *o, const struct store_result *const *results,
			   size_t nr_results, const struct otlp_host *host, struct otlp_pb *pb)
{
	size_t nr_profs = 0, nr_msgs = 0, g, prof = 0, msg = 0;
	uint32_t p, i, j, k;
	int err;

	err = otlp__group(o, nr_results, pb);
	if (err)
		return err;
	for (p = 0; p < o->nr_procs; p++) {
		for (i = 0; i < nr_results; i++) {
			unsigned int nv = profile__desc(results[i]->type)->nr_values;

			g = (size_t)p * nr_results + i;
			if (pb->group_first[g] == pb->group_first[g + 1])
				continue;
			nr_profs += nv;
			nr_msgs += (size_t)nv * (pb->group_first[g + 1] - pb->group_first[g]);
		}
	}

	pb->rprofs = array__alloc(o->nr_procs, sizeof(*pb->rprofs));
	pb->rprofs_p = array__alloc(o->nr_procs, sizeof(*pb->rprofs_p));
	pb->resources = array__alloc(o->nr_procs, sizeof(*pb->resources));
	pb->kvs = array__alloc((size_t)o->nr_procs * NR_RES_ATTRS, sizeof(*pb->kvs));
	pb->kvs_p = array__alloc((size_t)o->nr_procs * NR_RES_ATTRS, sizeof(*pb->kvs_p));
	pb->kv_vals = array__alloc((size_t)o->nr_procs * NR_RES_ATTRS, sizeof(*pb->kv_vals));
	pb->sprofs = array__alloc(o->nr_procs, sizeof(*pb->sprofs));
	pb->sprofs_p = array__alloc(o->nr_procs, sizeof(*pb->sprofs_p));
	pb->profs = array__alloc(nr_profs, sizeof(*pb->profs));
	pb->profs_p = array__alloc(nr_profs, sizeof(*pb->profs_p));
	pb->profile_ids = array__alloc(nr_profs, PROFILE_ID_LEN);
	pb->samples = array__alloc(nr_msgs, sizeof(*pb->samples));
	pb->samples_p = array__alloc(nr_msgs, sizeof(*pb->samples_p));
	pb->values = array__alloc(nr_msgs, sizeof(*pb->values));
	if (!pb->rprofs || !pb->rprofs_p || !pb->resources || !pb->kvs || !pb->kvs_p ||
	    !pb->kv_vals || !pb->sprofs || !pb->sprofs_p || !pb->profs || !pb->profs_p ||
	    !pb->profile_ids || !pb->samples || !pb->samples_p || !pb->values)
		return -ENOMEM;
	otlp__profile_ids(pb->profile_ids, nr_profs);

	COMMON(instrumentation_scope__init)(&pb->scope);
	pb->scope.name = (char *)"autoprof";
	if (host && host->scope_version)
		pb->scope.version = (char *)host->scope_version;

	for (p = 0; p < o->nr_procs; p++) {
		pb_rprof *rp = &pb->rprofs[p];
		pb_sprof *sp = &pb->sprofs[p];

		otlp__resource(&o->procs[p], host, &pb->resources[p], &pb->kvs[p * NR_RES_ATTRS],
			       &pb->kvs_p[p * NR_RES_ATTRS], &pb->kv_vals[p * NR_RES_ATTRS]);
		PROF(resource_profiles__init)(rp);
		rp->resource = &pb->resources[p];
		rp->scope_profiles = &pb->sprofs_p[p];
		rp->n_scope_profiles = 1;
		pb->rprofs_p[p] = rp;
		PROF(scope_profiles__init)(sp);
		sp->scope = &pb->scope;
		sp->profiles = &pb->profs_p[prof];
		pb->sprofs_p[p] = sp;

		for (i = 0; i < nr_results; i++) {
			const struct store_result *res = results[i];
			unsigned int nv = profile__desc(res->type)->nr_values;
			uint32_t first, last;

			g = (size_t)p * nr_results + i;
			first = pb->group_first[g];
			last = pb->group_first[g + 1];
			if (first == last)
				continue;
			for (j = 0; j < nv; j++) {
				pb_profile *pr = &pb->profs[prof];

				PROF(profile__init)(pr);
				pr->sample_type = &pb->vts[pb->vt_first[i] + j];
				pr->period_type = &pb->vts[pb->vt_first[i] + nv];
				pr->period = (int64_t)res->period;
				pr->time_unix_nano = res->start_ns;
				pr->duration_nano = res->duration_ns;
				pr->profile_id.data = &pb->profile_ids[prof * PROFILE_ID_LEN];
				pr->profile_id.len = PROFILE_ID_LEN;
				pr->samples = &pb->samples_p[msg];
				pr->n_samples = last - first;
				for (k = first; k < last; k++) {
					const struct otlp_sample *os = &o->samples[pb->order[k]];
					pb_sample *s = &pb->samples[msg];

					PROF(sample__init)(s);
					s->stack_index = os->k.stack;
					s->link_index = (int32_t)os->k.link;
					/* Shared by the sample's twins in the other profiles. */
					s->attribute_indices = (int32_t *)os->k.attrs;
					s->n_attribute_indices = os->k.nr_attrs;
					pb->values[msg] = (int64_t)os->values[j];
					s->values = &pb->values[msg];
					s->n_values = 1;
					pb->samples_p[msg++] = s;
				}
				pb->profs_p[prof++] = pr;
				sp->n_profiles++;
			}
		}
	}
	return 0;
}

static int otlp__pack(const pb_request *req, struct buf *out)
{
	size_t len = REQ(get_packed_size)(req);

	if (buf__reserve(out, len))
		return -ENOMEM;
	REQ(pack)(req, (uint8_t *)out->data + out->len);
	out->len += len;
	out->data[out->len] = '\0';
	return 0;
}

int otlp__encode(const struct store_result *const *results, size_t nr_results,
		 struct symbolizer *sym, const struct otlp_host *host, struct buf *out)
{
	struct otlp_pb pb = { 0 };
	struct otlp_enc o;
	size_t nr_rows = 0, i, r;
	int err;

	for (i = 0; i < nr_results; i++) {
		if (!results[i] || !profile__desc(results[i]->type))
			return -EINVAL;
		nr_rows += results[i]->nr_rows;
	}
	err = otlp_enc__init(&o, sym);
	if (err)
		return err;
	for (i = 0; i < nr_results; i++) {
		const struct store_result *res = results[i];
		unsigned int nv = profile__desc(res->type)->nr_values;

		for (r = 0; r < res->nr_rows; r++) {
			err = otlp__row(&o, i, &res->rows[r], nv);
			if (err)
				goto out_free;
		}
	}
	err = otlp__value_types(&o, results, nr_results, &pb);
	err = err ?: otlp__table_attrs(&o, &pb);
	err = err ?: otlp__dictionary(&o, &pb);
	err = err ?: otlp__resources(&o, results, nr_results, host, &pb);
	if (err)
		goto out_free;

	REQ(init)(&pb.req);
	pb.req.resource_profiles = pb.rprofs_p;
	pb.req.n_resource_profiles = o.nr_procs;
	pb.req.dictionary = &pb.dict;
	err = otlp__pack(&pb.req, out);
out_free:
	/* The caller turns err into its own answer; this only helps when debugging. */
	if (err)
		pr_debug("encoding %zu results (%zu rows) failed: %s\n", nr_results, nr_rows,
			 strerror(-err));
	otlp_pb__free(&pb);
	otlp_enc__exit(&o);
	return err;
}
