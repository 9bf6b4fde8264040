// SPDX-License-Identifier: GPL-2.0-only
/*
 * Publishes an OpenTelemetry process context (OTEP 4719) naming SERVICE, as an SDK would at its
 * start, then spins in ctx_spin for SECONDS, printing its pid first.
 *   procctx SECONDS SERVICE
 * The context is a memfd named OTEL_CTX whose header points at a hand-encoded protobuf
 * ProcessContext { resource { attributes { key "service.name" value { string_value SERVICE } } } }.
 * ctx_spin calls cos from libm, loaded after the context exists: the profiler re-reads the maps
 * of a process whose samples fall in a library it has not seen, and then finds the context
 * whenever it first looked (at exec, before main published anything).
 */
#define _GNU_SOURCE /* memfd_create */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct otel_ctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_ns;
	uint64_t payload;
};

static uint8_t payload[512];
static volatile double sink;

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Field number f, wire type 2 (length-delimited), then the bytes. */
static size_t put_bytes(uint8_t *p, unsigned int f, const void *data, size_t len)
{
	size_t n = put_varint(p, (uint64_t)f << 3 | 2);

	n += put_varint(p + n, len);
	memcpy(p + n, data, len);
	return n + len;
}

static size_t encode(uint8_t *out, const char *service)
{
	uint8_t any[256], kv[320], res[384];
	size_t n;

	n = put_bytes(any, 1, service, strlen(service));	/* AnyValue.string_value */
	size_t k = put_bytes(kv, 1, "service.name", 12);	/* KeyValue.key */
	k += put_bytes(kv + k, 2, any, n);			/* KeyValue.value */
	n = put_bytes(res, 1, kv, k);				/* Resource.attributes */
	return put_bytes(out, 1, res, n);			/* ProcessContext.resource */
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int publish(const char *service)
{
	struct otel_ctx_header *h;
	int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, 4096))
		return -1;
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		return -1;
	memcpy(h->signature, "OTEL_CTX", 8);
	h->version = 2;
	h->payload_size = (uint32_t)encode(payload, service);
	h->payload = (uint64_t)(uintptr_t)payload;
	/* Last: a reader takes the context as whole once this is non-zero. */
	__atomic_store_n(&h->published_ns, boottime_ns(), __ATOMIC_RELEASE);
	return 0;
}

__attribute__((noinline)) void ctx_spin(double (*fn)(double), time_t until)
{
	while (time(NULL) < until)
		for (int i = 0; i < 100000; i++)
			sink = fn(sink + i);
}

int main(int argc, char **argv)
{
	double (*fn)(double);
	void *lib;

	if (argc != 3 || strlen(argv[2]) > 200) {
		fprintf(stderr, "usage: procctx SECONDS SERVICE\n");
		return 2;
	}
	if (publish(argv[2])) {
		perror("publish");
		return 1;
	}
	lib = dlopen("libm.so.6", RTLD_NOW);
	fn = lib ? (double (*)(double))dlsym(lib, "cos") : NULL;
	if (!fn) {
		fprintf(stderr, "libm: %s\n", dlerror());
		return 1;
	}
	printf("%d\n", getpid());
	fflush(stdout);
	ctx_spin(fn, time(NULL) + atoi(argv[1]));
	return 0;
}
