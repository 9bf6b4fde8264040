/* DEPS: src/export/otlp.c src/export/intern.c src/lib/array.c src/lib/buf.c src/lib/strtab.c src/lib/log.c src/store/profiles.c tests/unit/fake_symbolizer.c gen/opentelemetry/proto/common/v1/common.pb-c.c gen/opentelemetry/proto/resource/v1/resource.pb-c.c gen/opentelemetry/proto/profiles/v1development/profiles.pb-c.c gen/opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.c src/lib/ufile.c src/lib/procfs.c */
// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

#include "export/otlp.h"
#include "lib/buf.h"
#include "store/store.h"
#include "fake_symbolizer.h"
#include "testlib.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dict;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles pb_rprof;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_attr;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_kv;

#define COLLECTOR(fn) opentelemetry__proto__collector__profiles__v1development__##fn
#define REQ(fn)	      COLLECTOR(export_profiles_service_request__##fn)
#define ANY_STRING OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
#define ANY_INT	   OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE

#define K_SYSCALL 0xffffffff81000100ULL
#define K_WRITE	  0xffffffff81000200ULL

#define PROTO_DIR  "otlp"
#define PROTO_FILE "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
#define PROTO_MSG                                                                        \
	"opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"

static char tmpdir[64];

static const struct otlp_host host = { "testhost", "1.2.3" };

/*
 * Five cpu rows of two processes over three dsos. app 0x2000 resolves to two lines (inner
 * inlined into outer). Rows 1, 2 and 3 have the same frames (row 3 in its own array): one
 * Stack. Rows 1 and 3 also share pid, tid and thread name, so they are one Sample. Row 4 has no
 * thread name.
 */
struct fixture {
	struct dso *app, *libc, *kern;
	struct frame f0[5], f1[2], f2[2], f3[2];
	struct store_row rows[5];
	struct store_result res;
	const struct store_result *results[1];
};

static struct store_row row(const struct frame *f, uint32_t nr, uint32_t pid, uint32_t tid,
			    const char *comm, const char *exe, const char *path,
			    const char *container, uint64_t count, uint64_t ns)
{
	return (struct store_row){ .frames = f, .nr_frames = nr, .pid = pid, .tid = tid,
				   .comm = comm, .exe = exe, .exe_path = path,
				   .container_id = container, .values = { count, ns } };
}

static int fixture__init(struct fixture *fx)
{
	int err = 0;

	memset(fx, 0, sizeof(*fx));
	fx->app = fake_dso__new(DSO_ELF, "/usr/bin/app", "abcdef0123456789");
	fx->libc = fake_dso__new(DSO_ELF, "/usr/lib/libc.so.6", "");
	fx->kern = fake_dso__new(DSO_KERNEL, "[kernel.kallsyms]", "");
	if (!fx->app || !fx->libc || !fx->kern)
		return -ENOMEM;
	err = err ?: fake_dso__add_line(fx->app, 0x1000, "main", NULL, "app.c", 10);
	err = err ?: fake_dso__add_line(fx->app, 0x2000, "inner", "_Z5innerv", "app.c", 25);
	err = err ?: fake_dso__add_line(fx->app, 0x2000, "outer", "_Z5outerv", "app.c", 40);
	err = err ?: fake_dso__add_line(fx->app, 0x3000, "outer", "_Z5outerv", "app.c", 44);
	err = err ?: fake_dso__add_line(fx->libc, 0x500, "write", NULL, "", 0);
	err = err ?: fake_dso__add_line(fx->kern, K_SYSCALL, "do_syscall_64", NULL, "", 0);
	err = err ?: fake_dso__add_line(fx->kern, K_WRITE, "ksys_write", NULL, "", 0);
	if (err)
		return err;

	fx->f0[0] = (struct frame){ fx->kern, K_WRITE };
	fx->f0[1] = (struct frame){ fx->kern, K_SYSCALL };
	fx->f0[2] = (struct frame){ fx->libc, 0x500 };
	fx->f0[3] = (struct frame){ fx->app, 0x2000 };
	fx->f0[4] = (struct frame){ fx->app, 0x1000 };
	fx->f1[0] = (struct frame){ fx->app, 0x3000 };
	fx->f1[1] = (struct frame){ fx->app, 0x1000 };
	fx->f2[0] = (struct frame){ fx->app, 0x4444 };
	fx->f2[1] = (struct frame){ fx->app, 0x1000 };
	fx->f3[0] = fx->f1[0];
	fx->f3[1] = fx->f1[1];

	fx->rows[0] = row(fx->f0, 5, 100, 101, "worker", "app", "/usr/bin/app", "", 3, 30000000);
	fx->rows[1] = row(fx->f1, 2, 100, 102, "worker 2", "app", "/usr/bin/app", "", 2, 20000000);
	fx->rows[2] = row(fx->f1, 2, 200, 200, "other", "other", "/opt/other", "c0ffee", 1,
			  10000000);
	fx->rows[3] = row(fx->f3, 2, 100, 102, "worker 2", "app", "/usr/bin/app", "", 4, 40000000);
	fx->rows[4] = row(fx->f2, 2, 200, 201, "", "other", "/opt/other", "c0ffee", 5, 50000000);

	fx->res.type = PROFILE_CPU;
	fx->res.start_ns = 1700000000000000000ULL;
	fx->res.duration_ns = 10000000000ULL;
	fx->res.period = 10000000;
	fx->res.nr_rows = 5;
	fx->res.rows = fx->rows;
	fx->results[0] = &fx->res;
	return 0;
}

static void fixture__exit(struct fixture *fx)
{
	dso__put(fx->app);
	dso__put(fx->libc);
	dso__put(fx->kern);
}

static int write_file(const char *path, const struct buf *b)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fwrite(b->data, 1, b->len, f) == b->len;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

static int have_protoc(void)
{
	return system("command -v protoc >/dev/null 2>&1") == 0 &&
	       access(PROTO_DIR "/" PROTO_FILE, R_OK) == 0;
}

/* Decodes b with protoc into text; returns protoc's exit status or -errno. */
static int protoc_decode(const struct buf *b, const char *name, struct buf *text)
{
	char path[128], cmd[768], chunk[4096];
	size_t n;
	FILE *p;
	int st;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	st = write_file(path, b);
	if (st)
		return st;
	snprintf(cmd, sizeof(cmd), "protoc --decode=%s --proto_path=%s %s < '%s' 2>&1", PROTO_MSG,
		 PROTO_DIR, PROTO_FILE, path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		if (buf__append(text, chunk, n)) {
			pclose(p);
			return -ENOMEM;
		}
	}
	st = pclose(p);
	if (!text->data && buf__puts(text, ""))
		return -ENOMEM;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -ECHILD;
}

#define CHECK_HAS(hay, needle)                                                           \
	do {                                                                                 \
		if (!strstr((hay), (needle))) {                                              \
			FAILF("%s:%d: output lacks \"%s\":\n%.300s", __FILE__, __LINE__,        \
			      (needle), (hay));                                              \
			return;                                                              \
		}                                                                            \
	} while (0)

static pb_request *decode(const struct buf *b)
{
	return REQ(unpack)(NULL, b->len, (const uint8_t *)b->data);
}

static const char *dstr(const pb_dict *d, int64_t idx)
{
	return idx >= 0 && (size_t)idx < d->n_string_table ? d->string_table[idx] : NULL;
}

static const pb_attr *dattr(const pb_dict *d, int32_t idx)
{
	return idx > 0 && (size_t)idx < d->n_attribute_table ? d->attribute_table[idx] : NULL;
}

/* The string value of the attribute named key among indices, or NULL. */
static const char *attr_str(const pb_dict *d, const int32_t *idx, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		const pb_attr *a = dattr(d, idx[i]);

		if (a && !strcmp(dstr(d, a->key_strindex), key) && a->value &&
		    a->value->value_case == ANY_STRING)
			return a->value->string_value;
	}
	return NULL;
}

/* The integer value of the attribute named key among indices, or -1. */
static int64_t attr_int(const pb_dict *d, const int32_t *idx, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		const pb_attr *a = dattr(d, idx[i]);

		if (a && !strcmp(dstr(d, a->key_strindex), key) && a->value &&
		    a->value->value_case == ANY_INT)
			return a->value->int_value;
	}
	return -1;
}

static const pb_any *resource_attr(const pb_rprof *rp, const char *key)
{
	for (size_t i = 0; rp->resource && i < rp->resource->n_attributes; i++) {
		const pb_kv *kv = rp->resource->attributes[i];

		if (!strcmp(kv->key, key))
			return kv->value;
	}
	return NULL;
}

static const char *resource_str(const pb_rprof *rp, const char *key)
{
	const pb_any *v = resource_attr(rp, key);

	return v && v->value_case == ANY_STRING ? v->string_value : NULL;
}

static const pb_location *find_location(const pb_dict *d, uint64_t addr)
{
	for (size_t i = 1; i < d->n_location_table; i++) {
		if (d->location_table[i]->address == addr)
			return d->location_table[i];
	}
	return NULL;
}

static const char *function_name(const pb_dict *d, int32_t idx)
{
	return idx > 0 && (size_t)idx < d->n_function_table ?
		       dstr(d, d->function_table[idx]->name_strindex) :
		       NULL;
}

/* Whether the stack's location addresses are exactly addrs, leaf first. */
static int stack_is(const pb_dict *d, int32_t stack, const uint64_t *addrs, size_t n)
{
	const Opentelemetry__Proto__Profiles__V1development__Stack *s;

	if (stack <= 0 || (size_t)stack >= d->n_stack_table)
		return 0;
	s = d->stack_table[stack];
	if (s->n_location_indices != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int32_t l = s->location_indices[i];

		if (l <= 0 || (size_t)l >= d->n_location_table ||
		    d->location_table[l]->address != addrs[i])
			return 0;
	}
	return 1;
}

/* Every table starts with its zero value. */
static void check_zero_entries(const pb_dict *d)
{
	CHECK(d->n_string_table >= 1);
	CHECK_STR(d->string_table[0], "");
	CHECK(d->n_mapping_table >= 1);
	CHECK(!d->mapping_table[0]->memory_start && !d->mapping_table[0]->memory_limit &&
	      !d->mapping_table[0]->file_offset && !d->mapping_table[0]->filename_strindex &&
	      !d->mapping_table[0]->n_attribute_indices);
	CHECK(d->n_location_table >= 1);
	CHECK(!d->location_table[0]->mapping_index && !d->location_table[0]->address &&
	      !d->location_table[0]->n_lines && !d->location_table[0]->n_attribute_indices);
	CHECK(d->n_function_table >= 1);
	CHECK(!d->function_table[0]->name_strindex && !d->function_table[0]->system_name_strindex &&
	      !d->function_table[0]->filename_strindex && !d->function_table[0]->start_line);
	CHECK(d->n_stack_table >= 1);
	CHECK_EQ(d->stack_table[0]->n_location_indices, 0);
	CHECK(d->n_attribute_table >= 1);
	CHECK(!d->attribute_table[0]->key_strindex && !d->attribute_table[0]->unit_strindex &&
	      (!d->attribute_table[0]->value ||
	       d->attribute_table[0]->value->value_case ==
		       OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE__NOT_SET));
	CHECK_EQ(d->n_link_table, 1);
	CHECK(!d->link_table[0]->trace_id.len && !d->link_table[0]->span_id.len);
}

/* Encodes the fixture; returns 0 or the encoder's error, with calls to the symbolizer. */
static int encode_fixture(struct fixture *fx, struct buf *out, unsigned long *calls)
{
	unsigned long before;
	int err;

	err = fixture__init(fx);
	if (err)
		return err;
	before = fake_symbolizer__calls();
	err = otlp__encode(fx->results, 1, NULL, &host, out);
	if (calls)
		*calls = fake_symbolizer__calls() - before;
	return err;
}

TEST(otlp_decodes_with_protoc)
{
	struct buf out = { 0 }, text = { 0 };
	struct fixture fx;
	int rc;

	if (!have_protoc())
		SKIP("protoc or %s/%s not found (run from the repository root)", PROTO_DIR,
		     PROTO_FILE);
	rc = encode_fixture(&fx, &out, NULL);
	fixture__exit(&fx);
	rc = rc ?: protoc_decode(&out, "req.pb", &text);
	buf__free(&out);
	if (rc) {
		FAILF("encode or protoc --decode: %d:\n%s", rc, text.data ? text.data : "");
		buf__free(&text);
		return;
	}
	CHECK_HAS(text.data, "key: \"host.name\"\n      value {\n"
			     "        string_value: \"testhost\"");
	CHECK_HAS(text.data, "key: \"process.pid\"\n      value {\n        int_value: 100\n");
	CHECK_HAS(text.data, "key: \"process.pid\"\n      value {\n        int_value: 200\n");
	CHECK_HAS(text.data, "key: \"process.executable.name\"\n      value {\n"
			     "        string_value: \"app\"");
	CHECK_HAS(text.data, "key: \"process.executable.path\"\n      value {\n"
			     "        string_value: \"/opt/other\"");
	CHECK_HAS(text.data, "key: \"container.id\"\n      value {\n"
			     "        string_value: \"c0ffee\"");
	CHECK_HAS(text.data, "scope {\n      name: \"autoprof\"\n      version: \"1.2.3\"\n");
	CHECK_HAS(text.data, "period: 10000000\n");
	CHECK_HAS(text.data, "time_unix_nano: 1700000000000000000\n");
	CHECK_HAS(text.data, "duration_nano: 10000000000\n");
	CHECK_HAS(text.data, "string_table: \"samples\"\n");
	CHECK_HAS(text.data, "string_table: \"count\"\n");
	CHECK_HAS(text.data, "string_table: \"cpu\"\n");
	CHECK_HAS(text.data, "string_table: \"nanoseconds\"\n");
	CHECK_HAS(text.data, "string_table: \"ksys_write\"\n");
	CHECK_HAS(text.data, "string_table: \"inner\"\n");
	CHECK_HAS(text.data, "string_table: \"app+0x4444\"\n");
	CHECK_HAS(text.data, "string_table: \"process.executable.build_id.gnu\"\n");
	CHECK_HAS(text.data, "string_value: \"abcdef0123456789\"");
	buf__free(&text);
}

/* The shape of the fixture's request, read back with protobuf-c. */
static void check_fixture(const pb_request *req)
{
	static const uint64_t st0[] = { K_WRITE, K_SYSCALL, 0x500, 0x2000, 0x1000 };
	static const uint64_t st1[] = { 0x3000, 0x1000 };
	static const uint64_t st2[] = { 0x4444, 0x1000 };
	static const int64_t values[2][2][2] = {
		/* pid 100: row 0, rows 1+3; pid 200: row 2, row 4 */
		{ { 3, 6 }, { 30000000, 60000000 } },
		{ { 1, 5 }, { 10000000, 50000000 } },
	};
	const pb_location *inl, *kern, *main_loc;
	const pb_dict *d = req->dictionary;
	const Opentelemetry__Proto__Profiles__V1development__Mapping *map;
	const pb_rprof *rp;
	const pb_sample *s;
	size_t i, j, k;

	CHECK(d);
	check_zero_entries(d);
	if (test_cur_failed)
		return;

	/* Two processes in order of appearance, each with one scope and one Profile per type. */
	CHECK_EQ(req->n_resource_profiles, 2);
	for (i = 0; i < 2; i++) {
		const pb_any *pid;

		rp = req->resource_profiles[i];
		pid = resource_attr(rp, "process.pid");
		CHECK(pid && pid->value_case == ANY_INT);
		CHECK_EQ(pid->int_value, i ? 200 : 100);
		CHECK_STR(resource_str(rp, "host.name"), "testhost");
		CHECK_EQ(rp->n_scope_profiles, 1);
		CHECK_STR(rp->scope_profiles[0]->scope->name, "autoprof");
		CHECK_STR(rp->scope_profiles[0]->scope->version, "1.2.3");
		CHECK_EQ(rp->scope_profiles[0]->n_profiles, 2);
		for (j = 0; j < 2; j++) {
			const pb_profile *p = rp->scope_profiles[0]->profiles[j];

			CHECK(p->sample_type && p->period_type);
			CHECK_STR(dstr(d, p->sample_type->type_strindex), j ? "cpu" : "samples");
			CHECK_STR(dstr(d, p->sample_type->unit_strindex),
				  j ? "nanoseconds" : "count");
			CHECK_STR(dstr(d, p->period_type->type_strindex), "cpu");
			CHECK_STR(dstr(d, p->period_type->unit_strindex), "nanoseconds");
			CHECK_EQ(p->period, 10000000);
			CHECK_EQ(p->time_unix_nano, 1700000000000000000ULL);
			CHECK_EQ(p->duration_nano, 10000000000ULL);
			CHECK_EQ(p->profile_id.len, 16);
			/* Rows 1 and 3 are one sample: two samples per process. */
			CHECK_EQ(p->n_samples, 2);
			for (k = 0; k < 2; k++) {
				CHECK_EQ(p->samples[k]->n_values, 1);
				CHECK_EQ(p->samples[k]->values[0], values[i][j][k]);
				CHECK_EQ(p->samples[k]->link_index, 0);
			}
		}
	}
	rp = req->resource_profiles[0];
	CHECK_STR(resource_str(rp, "process.executable.name"), "app");
	CHECK_STR(resource_str(rp, "process.executable.path"), "/usr/bin/app");
	CHECK(!resource_attr(rp, "container.id"));
	rp = req->resource_profiles[1];
	CHECK_STR(resource_str(rp, "process.executable.name"), "other");
	CHECK_STR(resource_str(rp, "container.id"), "c0ffee");

	/* Three distinct stacks; rows 1, 2 and 3 share one across both processes. */
	CHECK_EQ(d->n_stack_table, 4);
	CHECK_EQ(d->n_location_table, 8);
	CHECK_EQ(d->n_function_table, 8);
	CHECK_EQ(d->n_mapping_table, 4);
	s = req->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[0];
	CHECK(stack_is(d, s->stack_index, st0, 5));
	CHECK_STR(attr_str(d, s->attribute_indices, s->n_attribute_indices, "thread.name"),
		  "worker");
	CHECK_EQ(attr_int(d, s->attribute_indices, s->n_attribute_indices, "thread.id"), 101);
	s = req->resource_profiles[0]->scope_profiles[0]->profiles[1]->samples[1];
	CHECK(stack_is(d, s->stack_index, st1, 2));
	CHECK_STR(attr_str(d, s->attribute_indices, s->n_attribute_indices, "thread.name"),
		  "worker 2");
	CHECK_EQ(attr_int(d, s->attribute_indices, s->n_attribute_indices, "thread.id"), 102);
	rp = req->resource_profiles[1];
	CHECK_EQ(s->stack_index, rp->scope_profiles[0]->profiles[0]->samples[0]->stack_index);
	s = req->resource_profiles[1]->scope_profiles[0]->profiles[0]->samples[1];
	CHECK(stack_is(d, s->stack_index, st2, 2));
	/* An empty thread name is left out rather than written as "". */
	CHECK_EQ(s->n_attribute_indices, 1);
	CHECK_EQ(attr_int(d, s->attribute_indices, s->n_attribute_indices, "thread.id"), 201);

	/* Inlined frames: one Line each, innermost first. */
	inl = find_location(d, 0x2000);
	CHECK(inl);
	CHECK_EQ(inl->n_lines, 2);
	CHECK_STR(function_name(d, inl->lines[0]->function_index), "inner");
	CHECK_EQ(inl->lines[0]->line, 25);
	CHECK_STR(function_name(d, inl->lines[1]->function_index), "outer");
	CHECK_EQ(inl->lines[1]->line, 40);
	CHECK_STR(dstr(d, d->function_table[inl->lines[0]->function_index]->system_name_strindex),
		  "_Z5innerv");
	CHECK_STR(dstr(d, d->function_table[inl->lines[0]->function_index]->filename_strindex),
		  "app.c");
	/* outer is one Function shared by the inlined frame and the frame at 0x3000. */
	main_loc = find_location(d, 0x3000);
	CHECK(main_loc && main_loc->n_lines == 1);
	CHECK_EQ(main_loc->lines[0]->function_index, inl->lines[1]->function_index);

	/* Frame types, and the build ID on the mapping that has one. */
	kern = find_location(d, K_WRITE);
	main_loc = find_location(d, 0x1000);
	CHECK(kern && main_loc);
	CHECK_STR(attr_str(d, kern->attribute_indices, kern->n_attribute_indices,
			   "profile.frame.type"),
		  "kernel");
	CHECK_STR(attr_str(d, main_loc->attribute_indices, main_loc->n_attribute_indices,
			   "profile.frame.type"),
		  "native");
	CHECK(main_loc->mapping_index > 0 && (size_t)main_loc->mapping_index < d->n_mapping_table);
	map = d->mapping_table[main_loc->mapping_index];
	CHECK_STR(dstr(d, map->filename_strindex), "/usr/bin/app");
	CHECK_STR(attr_str(d, map->attribute_indices, map->n_attribute_indices,
			   "process.executable.build_id.gnu"),
		  "abcdef0123456789");
	CHECK(map->memory_limit >= 0x4444);
	CHECK(find_location(d, 0x500));
	map = d->mapping_table[find_location(d, 0x500)->mapping_index];
	CHECK_STR(dstr(d, map->filename_strindex), "/usr/lib/libc.so.6");
	CHECK_EQ(map->n_attribute_indices, 0);
	map = d->mapping_table[kern->mapping_index];
	CHECK(map->memory_limit > K_WRITE);
}

TEST(otlp_unpacks_with_dedup)
{
	struct buf out = { 0 };
	unsigned long calls = 0;
	struct fixture fx;
	pb_request *req;
	int rc;

	/* Appends: whatever out already holds stays in front. */
	CHECK_EQ(buf__puts(&out, "xyz"), 0);
	rc = encode_fixture(&fx, &out, &calls);
	fixture__exit(&fx);
	CHECK_EQ(fake_dso__live(), 0);
	if (rc) {
		buf__free(&out);
		CHECK_EQ(rc, 0);
	}
	CHECK(!memcmp(out.data, "xyz", 3));
	memmove(out.data, out.data + 3, out.len - 3);
	out.len -= 3;
	/* Each distinct frame is symbolized once, not once per row it appears in. */
	CHECK_EQ(calls, 7);
	req = decode(&out);
	buf__free(&out);
	CHECK(req);
	check_fixture(req);
	REQ(free_unpacked)(req, NULL);
}

/*
 * A process that exec()ed (or changed container) inside the window: its rows under each image
 * go to a Resource of their own, the pid alike, never under the other image's name.
 */
TEST(otlp_exec_mid_window)
{
	struct buf out = { 0 };
	struct fixture fx;
	pb_request *req;
	int rc = fixture__init(&fx);

	/* Row 3 (pid 100, 4 samples) after an exec into /usr/bin/next, in a container. */
	fx.rows[3].exe = "next";
	fx.rows[3].exe_path = "/usr/bin/next";
	fx.rows[3].container_id = "c0ffee";
	rc = rc ?: otlp__encode(fx.results, 1, NULL, &host, &out);
	fixture__exit(&fx);
	CHECK_EQ(rc, 0);
	req = decode(&out);
	buf__free(&out);
	CHECK(req);
	if (!req)
		return;
	CHECK_EQ(req->n_resource_profiles, 3);
	for (size_t i = 0; i < req->n_resource_profiles; i++) {
		const pb_rprof *rp = req->resource_profiles[i];
		const pb_profile *p = rp->scope_profiles[0]->profiles[0];
		int64_t n = 0;

		for (size_t k = 0; k < p->n_samples; k++)
			n += p->samples[k]->values[0];
		if (resource_attr(rp, "process.pid")->int_value != 100)
			continue;
		if (!strcmp(resource_str(rp, "process.executable.name"), "next")) {
			CHECK_STR(resource_str(rp, "container.id"), "c0ffee");
			CHECK_EQ(n, 4);
		} else {
			CHECK_STR(resource_str(rp, "process.executable.name"), "app");
			CHECK(!resource_attr(rp, "container.id"));
			CHECK_EQ(n, 5);
		}
	}
	REQ(free_unpacked)(req, NULL);
}

TEST(otlp_profile_ids_differ)
{
	struct buf out = { 0 };
	struct fixture fx;
	pb_request *req = NULL;
	const ProtobufCBinaryData *ids[4];
	int rc, distinct = 1;

	rc = encode_fixture(&fx, &out, NULL);
	fixture__exit(&fx);
	if (!rc)
		req = decode(&out);
	buf__free(&out);
	CHECK_EQ(rc, 0);
	CHECK(req);
	for (int i = 0; i < 4; i++)
		ids[i] = &req->resource_profiles[i / 2]->scope_profiles[0]->profiles[i % 2]
				  ->profile_id;
	for (int i = 0; i < 4; i++) {
		for (int j = i + 1; j < 4; j++)
			if (ids[i]->len == 16 && ids[j]->len == 16 &&
			    !memcmp(ids[i]->data, ids[j]->data, 16))
				distinct = 0;
	}
	REQ(free_unpacked)(req, NULL);
	CHECK(distinct);
}

static void check_empty(const struct buf *out)
{
	pb_request *req = decode(out);
	const pb_dict *d;

	CHECK(req);
	d = req->dictionary;
	if (!d || req->n_resource_profiles) {
		REQ(free_unpacked)(req, NULL);
		CHECK(!"an empty request has a dictionary and no resource profiles");
	}
	check_zero_entries(d);
	if (!test_cur_failed && (d->n_mapping_table != 1 || d->n_location_table != 1 ||
				 d->n_function_table != 1 || d->n_stack_table != 1))
		FAILF("an empty request has tables of more than their zero value");
	REQ(free_unpacked)(req, NULL);
}

TEST(otlp_empty_results)
{
	struct store_result res = { .type = PROFILE_CPU, .period = 10000000 };
	const struct store_result *results[1] = { &res };
	struct buf none = { 0 }, empty = { 0 }, text = { 0 };
	int rc;

	CHECK_EQ(otlp__encode(NULL, 0, NULL, &host, &none), 0);
	CHECK_EQ(otlp__encode(results, 1, NULL, NULL, &empty), 0);
	check_empty(&none);
	check_empty(&empty);
	if (test_cur_failed)
		goto out_free;
	if (!have_protoc()) {
		buf__free(&none);
		buf__free(&empty);
		SKIP("protoc not found");
	}
	rc = protoc_decode(&empty, "empty.pb", &text);
	if (rc)
		FAILF("protoc --decode: %d:\n%s", rc, text.data);
	else if (!strstr(text.data, "dictionary {") || strstr(text.data, "resource_profiles"))
		FAILF("unexpected text for an empty request:\n%s", text.data);
out_free:
	buf__free(&none);
	buf__free(&empty);
	buf__free(&text);
}

TEST(otlp_rejects_unknown_type)
{
	struct store_result res = { .type = PROFILE__MAX };
	const struct store_result *results[1] = { &res };
	struct buf out = { 0 };

	CHECK_EQ(otlp__encode(results, 1, NULL, &host, &out), -EINVAL);
	CHECK_EQ(out.len, 0);
}

/* A symbolizer failure at any frame reaches the caller, and out is left as it was found. */
TEST(otlp_reports_symbolizer_failure)
{
	struct buf out = { 0 };
	struct fixture fx;
	size_t len_failed = 0;
	int rc[8];

	CHECK_EQ(fixture__init(&fx), 0);
	for (int i = 0; i < 8; i++) {
		fake_symbolizer__fail_after(i);
		rc[i] = otlp__encode(fx.results, 1, NULL, &host, &out);
		if (i == 6)
			len_failed = out.len;
	}
	fake_symbolizer__fail_after(-1);
	fixture__exit(&fx);
	/* There are 7 distinct frames: failing at call 7 means no failure at all. */
	for (int i = 0; i < 7; i++)
		CHECK_EQ(rc[i], -ENOMEM);
	CHECK_EQ(rc[7], 0);
	CHECK_EQ(len_failed, 0);
	CHECK(out.len > 0);
	buf__free(&out);
}

/* 50k rows of 500 processes over 2000 distinct frames: every dedup table must grow. */
TEST(otlp_many_rows)
{
	enum { NR_ROWS = 50000, DEPTH = 8, NR_ADDRS = 2000, NR_PIDS = 500 };
	struct store_result res = { .type = PROFILE_CPU, .period = 1 };
	const struct store_result *results[1] = { &res };
	struct frame *frames = calloc(NR_ROWS * DEPTH, sizeof(*frames));
	struct store_row *rows = calloc(NR_ROWS, sizeof(*rows));
	struct dso *dso = fake_dso__new(DSO_ELF, "/bin/big", "");
	unsigned long calls = fake_symbolizer__calls();
	size_t nloc = 0, nfn = 0, nrp = 0, nsample = 0;
	int64_t total = 0;
	pb_request *req = NULL;
	struct buf out = { 0 };
	int rc = -ENOMEM;

	if (frames && rows && dso) {
		for (size_t r = 0; r < NR_ROWS; r++) {
			for (size_t d = 0; d < DEPTH; d++)
				frames[r * DEPTH + d] = (struct frame){
					dso, 0x10 * ((r * 7 + d * 131) % NR_ADDRS) };
			/* Each row its own tid: no two rows merge. */
			rows[r] = row(&frames[r * DEPTH], DEPTH, 1000 + r % NR_PIDS, (uint32_t)r,
				      "t", "big", "/bin/big", "", 1, 1);
		}
		res.rows = rows;
		res.nr_rows = NR_ROWS;
		rc = otlp__encode(results, 1, NULL, &host, &out);
		calls = fake_symbolizer__calls() - calls;
		req = rc ? NULL : decode(&out);
	}
	if (req) {
		nloc = req->dictionary->n_location_table;
		nfn = req->dictionary->n_function_table;
		nrp = req->n_resource_profiles;
		for (size_t i = 0; i < nrp; i++) {
			const pb_rprof *rp = req->resource_profiles[i];
			const pb_profile *p = rp->scope_profiles[0]->profiles[0];

			nsample += p->n_samples;
			for (size_t k = 0; k < p->n_samples; k++)
				total += p->samples[k]->values[0];
		}
		REQ(free_unpacked)(req, NULL);
	}
	buf__free(&out);
	dso__put(dso);
	free(frames);
	free(rows);
	CHECK_EQ(rc, 0);
	CHECK_EQ(nrp, NR_PIDS);
	CHECK_EQ(nsample, NR_ROWS);
	CHECK_EQ(total, NR_ROWS);
	CHECK_EQ(nloc, NR_ADDRS + 1);
	CHECK_EQ(nfn, NR_ADDRS + 1);
	CHECK_EQ(calls, NR_ADDRS);
}

int main(void)
{
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_otlp.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}

	RUN(otlp_decodes_with_protoc);
	RUN(otlp_unpacks_with_dedup);
	RUN(otlp_profile_ids_differ);
	RUN(otlp_exec_mid_window);
	RUN(otlp_empty_results);
	RUN(otlp_rejects_unknown_type);
	RUN(otlp_reports_symbolizer_failure);
	RUN(otlp_many_rows);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return test_summary();
}
