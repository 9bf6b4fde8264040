/* DEPS: src/export/pprof.c src/export/intern.c src/lib/array.c src/lib/buf.c src/lib/strtab.c src/lib/log.c src/store/profiles.c tests/unit/fake_symbolizer.c gen/pprof/profile.pb-c.c src/lib/ufile.c src/lib/procfs.c */
// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "pprof/profile.pb-c.h"

#include "export/pprof.h"
#include "lib/buf.h"
#include "store/store.h"
#include "fake_symbolizer.h"
#include "testlib.h"

#define K_SYSCALL 0xffffffff81000100ULL
#define K_WRITE	  0xffffffff81000200ULL

static char tmpdir[64];

/*
 * Four rows over three dsos. main (app 0x1000) is in every row; app 0x2000 resolves to two
 * lines (inner inlined into outer); app 0x3000 is another address in outer, so outer must
 * become one Function used by two Locations. Rows 1 and 3 differ only by tid, so folded output
 * merges them. app 0x4444 has no symbol and gets the fallback name.
 */
struct fixture {
	struct dso *app, *libc, *kern;
	struct frame f0[5], f1[2], f2[2], f3[2];
	struct store_row rows[4];
	struct store_result res;
};

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

	fx->rows[0] = (struct store_row){ fx->f0, 5, 100, 101, "worker", "app", { 3, 30000000 },
					  "/usr/bin/app", "", NULL, NULL, "", 0, 0, 0, 0, "" };
	fx->rows[1] = (struct store_row){ fx->f1, 2, 100, 102, "worker 2", "app", { 2, 20000000 },
					  "/usr/bin/app", "", NULL, NULL, "", 0, 0, 0, 0, "" };
	fx->rows[2] = (struct store_row){ fx->f2, 2, 200, 200, "other", "", { 1, 10000000 }, "",
					  "", NULL, NULL, "", 0, 0, 0, 0, "" };
	fx->rows[3] = (struct store_row){ fx->f3, 2, 100, 103, "worker 3", "app", { 4, 40000000 },
					  "/usr/bin/app", "", NULL, NULL, "", 0, 0, 0, 0, "" };

	fx->res.type = PROFILE_CPU;
	fx->res.start_ns = 1700000000000000000ULL;
	fx->res.duration_ns = 10000000000ULL;
	fx->res.period = 10000000;
	fx->res.nr_rows = 4;
	fx->res.rows = fx->rows;
	return 0;
}

static void fixture__exit(struct fixture *fx)
{
	dso__put(fx->app);
	dso__put(fx->libc);
	dso__put(fx->kern);
}

static int gunzip(const struct buf *in, struct buf *out)
{
	z_stream zs = { 0 };
	int ret;

	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in->data;
	zs.avail_in = in->len;
	do {
		if (buf__reserve(out, 4096)) {
			inflateEnd(&zs);
			return -ENOMEM;
		}
		zs.next_out = (Bytef *)out->data + out->len;
		zs.avail_out = out->cap - out->len - 1;
		ret = inflate(&zs, Z_NO_FLUSH);
		out->len = out->cap - 1 - zs.avail_out;
	} while (ret == Z_OK);
	inflateEnd(&zs);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

static Perftools__Profiles__Profile *decode(const struct buf *gz)
{
	Perftools__Profiles__Profile *p = NULL;
	struct buf raw = { 0 };

	if (!gunzip(gz, &raw))
		p = perftools__profiles__profile__unpack(NULL, raw.len, (uint8_t *)raw.data);
	buf__free(&raw);
	return p;
}

static const char *pstr(const Perftools__Profiles__Profile *p, int64_t idx)
{
	return idx >= 0 && (size_t)idx < p->n_string_table ? p->string_table[idx] : NULL;
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

static int have_go(void)
{
	return system("command -v go >/dev/null 2>&1") == 0;
}

/* Runs `go tool pprof -symbolize=none <args> <file>`; returns its exit status or -errno. */
static int go_pprof(const char *args, const char *file, struct buf *out)
{
	char cmd[512], chunk[4096];
	size_t n;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "go tool pprof -symbolize=none %s '%s' 2>&1", args, file);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		if (buf__append(out, chunk, n)) {
			pclose(p);
			return -ENOMEM;
		}
	}
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -ECHILD;
}

/*
 * Checks that every needle occurs in hay, each after the previous one: the order of samples and
 * locations in pprof's output is the order the encoder wrote them.
 */
static const char *find_in_order(const char *hay, const char *const *needles, size_t n)
{
	const char *p = hay;

	for (size_t i = 0; i < n; i++) {
		const char *q = strstr(p, needles[i]);

		if (!q)
			return needles[i];
		p = q + strlen(needles[i]);
	}
	return NULL;
}

#define CHECK_IN_ORDER(hay, ...)                                                         \
	do {                                                                                 \
		static const char *const _n[] = { __VA_ARGS__ };                             \
		const char *_miss = find_in_order((hay), _n, sizeof(_n) / sizeof(_n[0]));    \
		if (_miss) {                                                                 \
			FAILF("%s:%d: output lacks (in order) \"%s\":\n%s", __FILE__, __LINE__,  \
			      _miss, (hay));                                                 \
			return;                                                              \
		}                                                                            \
	} while (0)

#define CHECK_HAS(hay, needle)                                                           \
	do {                                                                                 \
		if (!strstr((hay), (needle))) {                                              \
			FAILF("%s:%d: output lacks \"%s\":\n%s", __FILE__, __LINE__, (needle), \
			      (hay));                                                        \
			return;                                                              \
		}                                                                            \
	} while (0)

/* Encodes res into tmpdir/name and runs go tool pprof with args on it. */
static int encode_and_run(const struct store_result *res, const char *name, const char *args,
			  struct buf *out)
{
	struct buf gz = { 0 };
	char path[128];
	int err;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	err = pprof__encode(res, NULL, &gz);
	err = err ?: write_file(path, &gz);
	buf__free(&gz);
	return err ?: go_pprof(args, path, out);
}

TEST(pprof_raw_reads_back_in_go)
{
	struct buf out = { 0 };
	struct fixture fx;
	int rc;

	if (!have_go())
		SKIP("go is not installed");
	CHECK_EQ(fixture__init(&fx), 0);
	rc = encode_and_run(&fx.res, "raw.pb.gz", "-raw", &out);
	fixture__exit(&fx);
	if (rc) {
		FAILF("go tool pprof -raw: %d:\n%s", rc, out.data ? out.data : "");
		buf__free(&out);
		return;
	}
	CHECK_IN_ORDER(out.data, "PeriodType: cpu nanoseconds\n", "Period: 10000000\n",
		       "Duration: 10s\n", "Samples:\nsamples/count cpu/nanoseconds\n",
		       "          3   30000000: 1 2 3 4 5 \n"
		       "                comm:[worker] exe:[app] pid:[100] tid:[101]\n",
		       "          2   20000000: 6 5 \n"
		       "                comm:[worker 2] exe:[app] pid:[100] tid:[102]\n",
		       /* An empty exe is left out rather than written as "". */
		       "          1   10000000: 7 5 \n"
		       "                comm:[other] pid:[200] tid:[200]\n",
		       "          4   40000000: 6 5 \n"
		       "                comm:[worker 3] exe:[app] pid:[100] tid:[103]\n",
		       "Locations\n",
		       "     1: 0xffffffff81000200 M=1 ksys_write :0 s=0\n",
		       "     2: 0xffffffff81000100 M=1 do_syscall_64 :0 s=0\n",
		       "     3: 0x500 M=2 write :0 s=0\n",
		       "     4: 0x2000 M=3 inner app.c:25 s=0(_Z5innerv)\n"
		       "             outer app.c:40 s=0(_Z5outerv)\n",
		       "     5: 0x1000 M=3 main app.c:10 s=0\n",
		       "     6: 0x3000 M=3 outer app.c:44 s=0(_Z5outerv)\n",
		       "     7: 0x4444 M=3 app+0x4444 :0 s=0\n", "Mappings\n",
		       "1: 0x0/0xffffffffffffffff/0x0 [kernel.kallsyms]  [FN]\n",
		       "2: 0x0/0xffffffffffffffff/0x0 /usr/lib/libc.so.6  [FN]\n",
		       "3: 0x0/0xffffffffffffffff/0x0 /usr/bin/app abcdef0123456789 "
		       "[FN][FL][LN][IN]\n");
	CHECK(!strstr(out.data, "     8: "));
	buf__free(&out);
}

/* GPU memory rows carry api and gpu (the device ordinal; none when not known). */
TEST(pprof_gpu_labels)
{
	struct dso *dso = fake_dso__new(DSO_ELF, "/bin/x", "");
	struct frame f[1] = { { dso, 3 } };
	struct store_row rows[2] = {
		{ f, 1, 7, 7, "c", "x", { 1, 4096, 1, 4096 }, "", "", NULL, NULL, "", 0, 0,
		  GPU_API_HOST_PINNED, 1, "" },
		{ f, 1, 7, 8, "c", "x", { 2, 8192, 0, 0 }, "", "", NULL, NULL, "", 0, 0,
		  GPU_API_RUNTIME, 0, "" },
	};
	struct store_result res = { .type = PROFILE_GPUHEAP, .nr_rows = 2, .rows = rows,
				    .period = 1 };
	struct buf out = { 0 };
	int rc;

	if (!have_go()) {
		dso__put(dso);
		SKIP("go is not installed");
	}
	rc = encode_and_run(&res, "gpu.pb.gz", "-raw", &out);
	dso__put(dso);
	if (rc) {
		FAILF("go tool pprof -raw: %d:\n%s", rc, out.data ? out.data : "");
		buf__free(&out);
		return;
	}
	CHECK_IN_ORDER(out.data, "PeriodType: gpu_space bytes\n",
		       "gpu_alloc_objects/count gpu_alloc_space/bytes gpu_inuse_objects/count "
		       "gpu_inuse_space/bytes[dflt]\n",
		       "          1       4096          1       4096: 1 \n"
		       "                api:[host_pinned] comm:[c] exe:[x] gpu:[0] pid:[7] tid:[7]\n",
		       "          2       8192          0          0: 1 \n"
		       "                api:[runtime] comm:[c] exe:[x] pid:[7] tid:[8]\n");
	buf__free(&out);
}

TEST(pprof_traces_and_totals_in_go)
{
	struct buf traces = { 0 }, top = { 0 };
	struct fixture fx;
	int rc;

	if (!have_go())
		SKIP("go is not installed");
	CHECK_EQ(fixture__init(&fx), 0);
	rc = encode_and_run(&fx.res, "traces.pb.gz", "-traces", &traces);
	rc = rc ?: encode_and_run(&fx.res, "top.pb.gz", "-top -sample_index=samples", &top);
	fixture__exit(&fx);
	if (rc) {
		FAILF("go tool pprof: %d:\n%s%s", rc, traces.data ? traces.data : "",
		      top.data ? top.data : "");
		goto out_free;
	}
	/* Stacks leaf first, the inlined callee above the function it was inlined into. */
	CHECK_IN_ORDER(traces.data, "Total samples = 100ms",
		       "       exe:  app\n       pid:  100\n       tid:  101\n      comm:  worker\n"
		       "      30ms   ksys_write\n             do_syscall_64\n             write\n"
		       "             inner (inline)\n             outer\n             main\n",
		       "      comm:  worker 2\n      20ms   outer\n             main\n",
		       "      comm:  other\n      10ms   app+0x4444\n             main\n",
		       "      comm:  worker 3\n      40ms   outer\n             main\n");
	/* Values summed across rows: main is in all four (3+2+1+4), outer in three (3+2+4). */
	CHECK_HAS(top.data, "Total samples = 10 \n");
	CHECK_HAS(top.data, "         0     0%   100%         10   100%  main\n");
	CHECK_HAS(top.data, "         6 60.00% 60.00%          9 90.00%  outer\n");
	CHECK_HAS(top.data, "         3 30.00% 90.00%          3 30.00%  ksys_write\n");
out_free:
	buf__free(&traces);
	buf__free(&top);
}

static const Perftools__Profiles__Location *
find_location(const Perftools__Profiles__Profile *p, uint64_t addr)
{
	for (size_t i = 0; i < p->n_location; i++) {
		if (p->location[i]->address == addr)
			return p->location[i];
	}
	return NULL;
}

static const char *function_name(const Perftools__Profiles__Profile *p, uint64_t id)
{
	return id && id <= p->n_function ? pstr(p, p->function[id - 1]->name) : NULL;
}

static void check_decoded(const Perftools__Profiles__Profile *p)
{
	const Perftools__Profiles__Location *inl, *outer, *libc_write;
	const Perftools__Profiles__Mapping *app, *libc, *kern;
	size_t i;

	CHECK(p->n_string_table > 0);
	CHECK_STR(p->string_table[0], "");
	CHECK_EQ(p->n_sample_type, 2);
	CHECK_STR(pstr(p, p->sample_type[0]->type), "samples");
	CHECK_STR(pstr(p, p->sample_type[0]->unit), "count");
	CHECK_STR(pstr(p, p->sample_type[1]->type), "cpu");
	CHECK_STR(pstr(p, p->sample_type[1]->unit), "nanoseconds");
	CHECK(p->period_type);
	CHECK_STR(pstr(p, p->period_type->type), "cpu");
	CHECK_STR(pstr(p, p->period_type->unit), "nanoseconds");
	CHECK_EQ(p->period, 10000000);
	CHECK_EQ(p->time_nanos, 1700000000000000000LL);
	CHECK_EQ(p->duration_nanos, 10000000000LL);
	/* The cpu row has default_value -1: no default sample type. */
	CHECK_EQ(p->default_sample_type, 0);

	/* Seven distinct (dso, addr) across 11 frames; IDs dense from 1. */
	CHECK_EQ(p->n_sample, 4);
	CHECK_EQ(p->n_location, 7);
	for (i = 0; i < p->n_location; i++)
		CHECK_EQ(p->location[i]->id, i + 1);
	CHECK_EQ(p->sample[0]->n_location_id, 5);
	CHECK_EQ(p->sample[0]->location_id[4], p->sample[1]->location_id[1]);
	CHECK_EQ(p->sample[0]->location_id[4], p->sample[2]->location_id[1]);
	CHECK_EQ(p->sample[1]->location_id[0], p->sample[3]->location_id[0]);
	CHECK_EQ(p->sample[2]->n_label, 3);
	CHECK_EQ(p->sample[0]->n_label, 4);
	CHECK_STR(pstr(p, p->sample[0]->label[0]->key), "pid");
	CHECK_STR(pstr(p, p->sample[0]->label[0]->str), "100");
	CHECK_EQ(p->sample[0]->n_value, 2);
	CHECK_EQ(p->sample[0]->value[1], 30000000);

	/* outer is one Function shared by the inlined frame at 0x2000 and the one at 0x3000. */
	CHECK_EQ(p->n_function, 7);
	for (i = 0; i < p->n_function; i++)
		CHECK_EQ(p->function[i]->id, i + 1);
	inl = find_location(p, 0x2000);
	outer = find_location(p, 0x3000);
	CHECK(inl && outer);
	CHECK_EQ(inl->n_line, 2);
	CHECK_STR(function_name(p, inl->line[0]->function_id), "inner");
	CHECK_EQ(inl->line[0]->line, 25);
	CHECK_STR(function_name(p, inl->line[1]->function_id), "outer");
	CHECK_EQ(outer->n_line, 1);
	CHECK_EQ(outer->line[0]->function_id, inl->line[1]->function_id);
	CHECK_EQ(outer->line[0]->line, 44);
	CHECK_STR(pstr(p, p->function[inl->line[0]->function_id - 1]->system_name), "_Z5innerv");
	CHECK_STR(pstr(p, p->function[inl->line[0]->function_id - 1]->filename), "app.c");

	/* Mappings in order of first appearance: the leaf of row 0 is in the kernel. */
	CHECK_EQ(p->n_mapping, 3);
	kern = p->mapping[0];
	libc = p->mapping[1];
	app = p->mapping[2];
	CHECK_EQ(kern->id, 1);
	CHECK_EQ(app->id, 3);
	CHECK_STR(pstr(p, kern->filename), "[kernel.kallsyms]");
	CHECK_STR(pstr(p, app->filename), "/usr/bin/app");
	CHECK_STR(pstr(p, app->build_id), "abcdef0123456789");
	CHECK_EQ(libc->build_id, 0);
	CHECK(kern->memory_limit > K_WRITE);
	CHECK(app->has_functions && app->has_filenames && app->has_line_numbers &&
	      app->has_inline_frames);
	/* libc's only line has neither a file nor a line number. */
	CHECK(libc->has_functions && !libc->has_filenames && !libc->has_line_numbers &&
	      !libc->has_inline_frames);
	libc_write = find_location(p, 0x500);
	CHECK(libc_write);
	CHECK_EQ(libc_write->mapping_id, 2);
	CHECK_EQ(inl->mapping_id, 3);
}

TEST(pprof_decodes_with_dedup)
{
	Perftools__Profiles__Profile *p;
	unsigned long calls;
	struct buf gz = { 0 };
	struct fixture fx;
	int rc;

	CHECK_EQ(fixture__init(&fx), 0);
	calls = fake_symbolizer__calls();
	/* Appends: whatever out already holds stays in front. */
	CHECK_EQ(buf__puts(&gz, "xyz"), 0);
	rc = pprof__encode(&fx.res, NULL, &gz);
	calls = fake_symbolizer__calls() - calls;
	fixture__exit(&fx);
	CHECK_EQ(fake_dso__live(), 0);
	if (rc) {
		buf__free(&gz);
		CHECK_EQ(rc, 0);
	}
	CHECK(!memcmp(gz.data, "xyz", 3));
	memmove(gz.data, gz.data + 3, gz.len - 3);
	gz.len -= 3;
	/* Each distinct frame is symbolized once, not once per row it appears in. */
	CHECK_EQ(calls, 7);
	p = decode(&gz);
	buf__free(&gz);
	CHECK(p);
	check_decoded(p);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

TEST(pprof_empty_result)
{
	struct store_result res = { .type = PROFILE_CPU, .period = 10000000 };
	Perftools__Profiles__Profile *p;
	struct buf gz = { 0 }, out = { 0 };
	int rc;

	CHECK_EQ(pprof__encode(&res, NULL, &gz), 0);
	p = decode(&gz);
	buf__free(&gz);
	CHECK(p);
	rc = p->n_string_table > 0 && !strcmp(p->string_table[0], "") && p->n_sample == 0 &&
	     p->n_location == 0 && p->n_mapping == 0 && p->n_sample_type == 2;
	perftools__profiles__profile__free_unpacked(p, NULL);
	CHECK(rc);

	if (!have_go())
		SKIP("go is not installed");
	rc = encode_and_run(&res, "empty.pb.gz", "-raw", &out);
	if (rc) {
		FAILF("go tool pprof -raw: %d:\n%s", rc, out.data ? out.data : "");
		buf__free(&out);
		return;
	}
	CHECK_IN_ORDER(out.data, "PeriodType: cpu nanoseconds\n",
		       "Samples:\nsamples/count cpu/nanoseconds\nLocations\nMappings\n");
	buf__free(&out);
}

TEST(pprof_rejects_unknown_type)
{
	struct store_result res = { .type = PROFILE__MAX };
	struct buf out = { 0 };

	CHECK_EQ(pprof__encode(&res, NULL, &out), -EINVAL);
	CHECK_EQ(out.len, 0);
}

static const char folded_expected[] = "[unknown];main;app+0x4444 1\n"
				      "app;main;outer 6\n"
				      "app;main;outer;inner;write;do_syscall_64;ksys_write 3\n";

/* A symbolizer failure at any frame reaches the caller, and nothing leaks (see ASan/valgrind). */
TEST(encoders_report_symbolizer_failure)
{
	struct buf out = { 0 };
	struct fixture fx;
	int rc_pprof[8], rc_folded[8];

	CHECK_EQ(fixture__init(&fx), 0);
	for (int i = 0; i < 8; i++) {
		fake_symbolizer__fail_after(i);
		rc_pprof[i] = pprof__encode(&fx.res, NULL, &out);
		fake_symbolizer__fail_after(i);
		rc_folded[i] = folded__encode(&fx.res, NULL, &out);
	}
	fake_symbolizer__fail_after(-1);
	fixture__exit(&fx);
	/* There are 7 distinct frames: failing at call 7 means no failure at all. */
	for (int i = 0; i < 7; i++) {
		CHECK_EQ(rc_pprof[i], -ENOMEM);
		CHECK_EQ(rc_folded[i], -ENOMEM);
	}
	CHECK_EQ(rc_pprof[7], 0);
	CHECK_EQ(rc_folded[7], 0);
	/* Failed calls leave out as they found it; only the last two appended. */
	CHECK(out.len > sizeof(folded_expected) - 1);
	CHECK(!strcmp(out.data + out.len - (sizeof(folded_expected) - 1), folded_expected));
	buf__free(&out);
}

/* 100k rows over 2000 distinct frames: the dedup tables must grow and still find everything. */
TEST(pprof_many_rows)
{
	enum { NR_ROWS = 100000, DEPTH = 8, NR_ADDRS = 2000 };
	struct store_result res = { .type = PROFILE_CPU, .period = 1 };
	struct frame *frames = calloc(NR_ROWS * DEPTH, sizeof(*frames));
	struct store_row *rows = calloc(NR_ROWS, sizeof(*rows));
	struct dso *dso = fake_dso__new(DSO_ELF, "/bin/big", "");
	Perftools__Profiles__Profile *p = NULL;
	struct buf gz = { 0 }, folded = { 0 };
	unsigned long calls = fake_symbolizer__calls();
	int rc = -ENOMEM;
	size_t nloc = 0, nfn = 0, nsample = 0;

	if (frames && rows && dso) {
		for (size_t r = 0; r < NR_ROWS; r++) {
			for (size_t d = 0; d < DEPTH; d++)
				frames[r * DEPTH + d] = (struct frame){
					dso, 0x10 * ((r * 7 + d * 131) % NR_ADDRS) };
			rows[r] = (struct store_row){ &frames[r * DEPTH], DEPTH, (uint32_t)r,
						      (uint32_t)r, "t", "big", { 1, 1 }, "", "", NULL,
						      NULL, "", 0, 0, 0, 0, "" };
		}
		res.rows = rows;
		res.nr_rows = NR_ROWS;
		rc = pprof__encode(&res, NULL, &gz);
		calls = fake_symbolizer__calls() - calls;
		rc = rc ?: folded__encode(&res, NULL, &folded);
		p = rc ? NULL : decode(&gz);
	}
	if (p) {
		nloc = p->n_location;
		nfn = p->n_function;
		nsample = p->n_sample;
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	buf__free(&gz);
	buf__free(&folded);
	dso__put(dso);
	free(frames);
	free(rows);
	CHECK_EQ(rc, 0);
	CHECK_EQ(nsample, NR_ROWS);
	CHECK_EQ(nloc, NR_ADDRS);
	CHECK_EQ(nfn, NR_ADDRS);
	CHECK_EQ(calls, NR_ADDRS);
}

TEST(folded_text)
{
	struct buf out = { 0 };
	struct fixture fx;
	int rc;

	CHECK_EQ(fixture__init(&fx), 0);
	rc = folded__encode(&fx.res, NULL, &out);
	fixture__exit(&fx);
	if (rc) {
		buf__free(&out);
		CHECK_EQ(rc, 0);
	}
	/* Rows 1 and 3 differ only in tid: one line, 2 + 4. */
	CHECK_STR(out.data, folded_expected);
	buf__free(&out);
}

TEST(folded_ignores_row_order)
{
	struct store_row rev[4];
	struct buf out = { 0 };
	struct fixture fx;
	int rc;

	CHECK_EQ(fixture__init(&fx), 0);
	for (int i = 0; i < 4; i++)
		rev[i] = fx.rows[3 - i];
	fx.res.rows = rev;
	rc = folded__encode(&fx.res, NULL, &out);
	fixture__exit(&fx);
	if (rc) {
		buf__free(&out);
		CHECK_EQ(rc, 0);
	}
	CHECK_STR(out.data, folded_expected);
	buf__free(&out);
}

TEST(folded_escapes_separators)
{
	struct dso *dso = fake_dso__new(DSO_ELF, "/bin/x", "");
	struct frame f[3] = { { dso, 3 }, { dso, 2 }, { dso, 1 } };
	struct store_row row = { f, 3, 1, 1, "c", "my;exe", { 5, 0 }, "", "", NULL, NULL, "", 0, 0, 0, 0, "" };
	struct store_result res = { .type = PROFILE_CPU, .nr_rows = 1, .rows = &row };
	struct buf out = { 0 };
	int rc = -ENOMEM;

	if (dso && !fake_dso__add_line(dso, 1, "f<a;b>", NULL, "x.c", 1) &&
	    !fake_dso__add_line(dso, 2, "two\nlines", NULL, "x.c", 2) &&
	    !fake_dso__add_line(dso, 3, "operator new", NULL, "x.c", 3))
		rc = folded__encode(&res, NULL, &out);
	dso__put(dso);
	if (rc) {
		buf__free(&out);
		CHECK_EQ(rc, 0);
	}
	/* Spaces stay: only ';' and newlines would break the format. */
	CHECK_STR(out.data, "my_exe;f<a_b>;two_lines;operator new 5\n");
	buf__free(&out);
}

TEST(folded_empty_result)
{
	struct store_result res = { .type = PROFILE_CPU };
	struct buf out = { 0 };

	CHECK_EQ(folded__encode(&res, NULL, &out), 0);
	CHECK_EQ(out.len, 0);
	buf__free(&out);
}

int main(void)
{
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_pprof.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* go tool pprof wants a writable home and must never reach for the network. */
	setenv("HOME", tmpdir, 1);
	setenv("PPROF_TMPDIR", tmpdir, 1);
	setenv("GOPROXY", "off", 1);

	RUN(pprof_raw_reads_back_in_go);
	RUN(pprof_traces_and_totals_in_go);
	RUN(pprof_gpu_labels);
	RUN(pprof_decodes_with_dedup);
	RUN(pprof_empty_result);
	RUN(pprof_rejects_unknown_type);
	RUN(encoders_report_symbolizer_failure);
	RUN(pprof_many_rows);
	RUN(folded_text);
	RUN(folded_ignores_row_order);
	RUN(folded_escapes_separators);
	RUN(folded_empty_result);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return test_summary();
}
