/* DEPS: src/proc/procctx.c src/lib/procmaps.c src/lib/log.c src/lib/procmem.c gen/opentelemetry/proto/processcontext/v1development/process_context.pb-c.c gen/opentelemetry/proto/resource/v1/resource.pb-c.c gen/opentelemetry/proto/common/v1/common.pb-c.c src/lib/ufile.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The OTEP 4719 process context: payloads built with protobuf-c decode to their service.name,
 * malformed and truncated ones fail cleanly, and a context published in this very process is
 * found in its maps and copied through /proc/self/mem with the seqlock checks.
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "src/lib/procmaps.h"
#include "src/proc/procctx.h"
#include "testlib.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

typedef Opentelemetry__Proto__Common__V1__KeyValue kv_t;
typedef Opentelemetry__Proto__Common__V1__AnyValue any_t;
typedef Opentelemetry__Proto__Resource__V1__Resource resource_t;

static void kv_string(kv_t *kv, any_t *v, const char *key, const char *val)
{
	opentelemetry__proto__common__v1__key_value__init(kv);
	opentelemetry__proto__common__v1__any_value__init(v);
	kv->key = (char *)key;
	kv->value = v;
	v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = (char *)val;
}

/* A ProcessContext whose resource holds the n given key/value pairs (and an extra top-level
 * attribute when extra); returns its packed length into buf. */
static size_t build(uint8_t *buf, const char *const (*pairs)[2], size_t n, bool extra)
{
	kv_t kvs[8], top;
	any_t vals[8], topval;
	kv_t *kvp[8], *topp = &top;
	resource_t res;
	procctx_msg msg;

	opentelemetry__proto__resource__v1__resource__init(&res);
	opentelemetry__proto__processcontext__v1development__process_context__init(&msg);
	for (size_t i = 0; i < n; i++) {
		kv_string(&kvs[i], &vals[i], pairs[i][0], pairs[i][1]);
		kvp[i] = &kvs[i];
	}
	res.attributes = kvp;
	res.n_attributes = n;
	msg.resource = &res;
	if (extra) {
		kv_string(&top, &topval, "threadlocal.schema_version", "tlsdesc_v1_dev");
		msg.attributes = &topp;
		msg.n_attributes = 1;
	}
	return opentelemetry__proto__processcontext__v1development__process_context__pack(&msg, buf);
}

static const char *const std_pairs[][2] = {
	{ "telemetry.sdk.language", "c" },
	{ "service.name", "checkout" },
	{ "deployment.environment.name", "prod" },
};

TEST(decodes_service_name)
{
	uint8_t buf[512];
	char name[64] = "";
	size_t len = build(buf, std_pairs, 3, true);
	procctx_msg *msg;

	CHECK_EQ(procctx__decode_service(buf, len, name, sizeof(name)), 0);
	CHECK_STR(name, "checkout");
	/* The other resource attributes are there for whoever wants them. */
	msg = procctx__decode(buf, len);
	CHECK(msg);
	CHECK_STR(procctx__resource_string(msg, "deployment.environment.name"), "prod");
	CHECK(!procctx__resource_string(msg, "host.name"));
	CHECK_EQ(msg->n_attributes, 1);
	procctx__free(msg);
}

TEST(last_service_name_wins_and_truncates)
{
	static const char *const pairs[][2] = {
		{ "service.name", "first" },
		{ "service.name", "a-rather-long-service-name" },
	};
	uint8_t buf[512];
	char name[8];
	size_t len = build(buf, pairs, 2, false);

	CHECK_EQ(procctx__decode_service(buf, len, name, sizeof(name)), 0);
	CHECK_STR(name, "a-rathe");
}

TEST(no_service_name)
{
	static const char *const pairs[][2] = { { "service.namespace", "shop" } };
	static const uint8_t int_value[] = {
		/* resource { attributes { key "service.name" value { int_value 7 } } } */
		0x0a, 0x14, 0x0a, 0x12, 0x0a, 0x0c, 's', 'e', 'r', 'v', 'i', 'c', 'e', '.',
		'n',  'a',  'm',  'e',  0x12, 0x02, 0x18, 0x07,
	};
	uint8_t buf[512];
	char name[64] = "untouched";
	size_t len = build(buf, pairs, 1, true);

	CHECK_EQ(procctx__decode_service(buf, len, name, sizeof(name)), -ENODATA);
	/* An empty payload is an empty ProcessContext: no resource at all. */
	CHECK_EQ(procctx__decode_service(buf, 0, name, sizeof(name)), -ENODATA);
	/* A service.name that is not a string is no name. */
	CHECK_EQ(procctx__decode_service(int_value, sizeof(int_value), name, sizeof(name)),
		 -ENODATA);
	CHECK_STR(name, "untouched");
}

TEST(truncated_payloads_fail)
{
	uint8_t buf[512];
	char name[64];
	/* The resource alone: one length-delimited field, so every strict prefix cuts into it. */
	size_t len = build(buf, std_pairs, 3, false);

	for (size_t cut = 1; cut < len; cut++) {
		int err = procctx__decode_service(buf, cut, name, sizeof(name));

		if (err != -EBADMSG) {
			FAILF("prefix of %zu of %zu bytes: %d", cut, len, err);
			return;
		}
	}
}

TEST(malformed_payloads_fail)
{
	static const struct {
		const char *what;
		uint8_t bytes[12];
		size_t len;
	} cases[] = {
		{ "length past the end", { 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f }, 6 },
		{ "varint never ends", { 0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					 0x80, 0x80, 0x80 }, 12 },
		{ "resource as a varint", { 0x08, 0x01 }, 2 },
		{ "group wire type", { 0x0b, 0x0c }, 2 },
		{ "field number 0", { 0x02, 0x00 }, 2 },
		{ "attribute key as a varint", { 0x0a, 0x04, 0x0a, 0x02, 0x08, 0x01 }, 6 },
	};
	char name[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = procctx__decode_service(cases[i].bytes, cases[i].len, name, sizeof(name));

		if (err != -EBADMSG) {
			FAILF("%s: %d", cases[i].what, err);
			return;
		}
	}
}

TEST(mapping_names)
{
	CHECK(procctx__is_mapping("/memfd:OTEL_CTX"));
	CHECK(procctx__is_mapping("[anon_shmem:OTEL_CTX]"));
	CHECK(procctx__is_mapping("[anon:OTEL_CTX]"));
	CHECK(!procctx__is_mapping("/memfd:OTEL_CTX2"));
	CHECK(!procctx__is_mapping("/tmp/OTEL_CTX"));
	CHECK(!procctx__is_mapping("[anon:jit code]"));
	CHECK(!procctx__is_mapping(""));
}

/* The header as OTEP 4719 lays it out. */
struct header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_ns;
	uint64_t payload;
};

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int find_ctx(const struct map_entry *e, void *arg)
{
	if (procctx__is_mapping(e->path)) {
		*(uint64_t *)arg = e->start;
		return 1;
	}
	return 0;
}

/* Publishes a context in the OTEL_CTX mapping h, then reads it back as autoprof would. */
static void read_own(struct header *h, const uint8_t *payload, size_t len)
{
	uint64_t addr = 0, published = 0;
	size_t got_len;
	void *got;
	char name[64];

	/* Mapped, not filled yet (an SDK between mmap and publishing): not a bad header. */
	CHECK_EQ(maps__for_each(getpid(), false, find_ctx, &addr), 1);
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), -EAGAIN);
	CHECK(!got);
	addr = 0;

	memcpy(h->signature, "OTEL_CTX", 8);
	h->version = 2;
	h->payload_size = (uint32_t)len;
	h->payload = (uint64_t)(uintptr_t)payload;
	h->published_ns = boottime_ns();

	CHECK_EQ(maps__for_each(getpid(), false, find_ctx, &addr), 1);
	CHECK_EQ(addr, (uint64_t)(uintptr_t)h);
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), 0);
	CHECK_EQ(published, h->published_ns);
	CHECK_EQ(got_len, len);
	CHECK(!memcmp(got, payload, len));
	CHECK_EQ(procctx__decode_service(got, got_len, name, sizeof(name)), 0);
	CHECK_STR(name, "checkout");
	free(got);

	/* Unchanged since: nothing copied. */
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), 1);
	CHECK(!got);
	/* Republished: copied again. */
	h->published_ns++;
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), 0);
	CHECK_EQ(published, h->published_ns);
	free(got);

	/* Being updated. */
	published = 0;
	h->published_ns = 0;
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), -EAGAIN);
	CHECK(!got);
	h->published_ns = boottime_ns();
	h->version = 1;
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), -EBADMSG);
	h->version = 2;
	h->signature[0] = 'X';
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), -EBADMSG);
	h->signature[0] = 'O';
	h->payload_size = PROCCTX_MAX_PAYLOAD + 1;
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), -E2BIG);
	/* A payload pointer into nothing. */
	h->payload_size = (uint32_t)len;
	h->payload = 8;
	CHECK_EQ(procctx__read_payload(getpid(), addr, &published, &got, &got_len), -EIO);
	CHECK(!got);
	CHECK_EQ(published, 0);
	/* A process that is gone. */
	CHECK_EQ(procctx__read_payload(0x7ffffff0, addr, &published, &got, &got_len), -ESRCH);
}

TEST(reads_own_memfd_context)
{
	uint8_t payload[512];
	size_t len = build(payload, std_pairs, 3, true);
	struct header *h;
	int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(!ftruncate(fd, 4096));
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(h != MAP_FAILED);
	read_own(h, payload, len);
	munmap(h, 4096);
}

TEST(reads_own_anon_context)
{
	uint8_t payload[512];
	size_t len = build(payload, std_pairs, 3, false);
	struct header *h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);

	CHECK(h != MAP_FAILED);
	/* Needs CONFIG_ANON_VMA_NAME (Linux 5.17+). */
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, h, 4096, "OTEL_CTX")) {
		munmap(h, 4096);
		SKIP("PR_SET_VMA_ANON_NAME: %s", strerror(errno));
	}
	read_own(h, payload, len);
	munmap(h, 4096);
}

int main(void)
{
	RUN(decodes_service_name);
	RUN(last_service_name_wins_and_truncates);
	RUN(no_service_name);
	RUN(truncated_payloads_fail);
	RUN(malformed_payloads_fail);
	RUN(mapping_names);
	RUN(reads_own_memfd_context);
	RUN(reads_own_anon_context);
	return test_summary();
}
