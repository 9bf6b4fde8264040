// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/procmem.h"
#include "proc/procctx.h"

#define PROCCTX_SIGNATURE "OTEL_CTX"
#define PROCCTX_VERSION	  2
/* A writer that keeps republishing could starve us; a few tries, then the next maps read. */
#define COPY_TRIES 3

/* The header as the process lays it out (x86-64: host endian, naturally aligned). */
struct procctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_ns; /* CLOCK_BOOTTIME; 0 while the writer updates the context */
	uint64_t payload;      /* address of the protobuf in the process */
};
_Static_assert(sizeof(struct procctx_header) == 32, "OTEP 4719 header is 32 bytes");

bool procctx__is_mapping(const char *path)
{
	/* memfd_create("OTEL_CTX"), possibly "(deleted)" (stripped by the maps parser), shared or
	 * private anonymous memory named with PR_SET_VMA_ANON_NAME. */
	return !strcmp(path, "/memfd:OTEL_CTX") || !strcmp(path, "[anon_shmem:OTEL_CTX]") ||
	       !strcmp(path, "[anon:OTEL_CTX]");
}

/* Callers tell a process gone (-ESRCH) from anything else unreadable (-EIO, short reads too). */
static int read_exact(int fd, void *buf, size_t len, uint64_t addr)
{
	int err = procmem__read(fd, addr, buf, len);

	return !err || err == -ESRCH ? err : -EIO;
}

static int read_header(int fd, uint64_t addr, struct procctx_header *h)
{
	int err = read_exact(fd, h, sizeof(*h), addr);

	if (err)
		return err;
	/*
	 * Not published yet, or being updated: the mapping exists before its writer fills the
	 * header (an all-zero page at first), so this is told apart from a bad header.
	 */
	if (!h->published_ns)
		return -EAGAIN;
	if (memcmp(h->signature, PROCCTX_SIGNATURE, sizeof(h->signature)) ||
	    h->version != PROCCTX_VERSION)
		return -EBADMSG;
	if (h->payload_size > PROCCTX_MAX_PAYLOAD)
		return -E2BIG;
	return 0;
}

int procctx__read_payload(uint32_t pid, uint64_t addr, uint64_t *published_ns, void **payload,
			  size_t *len)
{
	struct procctx_header h, again;
	void *buf = NULL;
	int fd, err = -EAGAIN;

	*payload = NULL;
	*len = 0;
	fd = procmem__open(pid);
	if (fd < 0)
		return fd == -ENOENT || fd == -ESRCH ? -ESRCH : -EIO;
	for (int i = 0; i < COPY_TRIES; i++) {
		err = read_header(fd, addr, &h);
		if (err == -EAGAIN)
			continue;
		if (err)
			break;
		if (*published_ns && h.published_ns == *published_ns) {
			err = 1;
			break;
		}
		free(buf);
		/* One byte more than needed so that an empty payload still has a buffer. */
		buf = malloc(h.payload_size + 1);
		if (!buf) {
			err = -ENOMEM;
			break;
		}
		if (h.payload_size) {
			err = read_exact(fd, buf, h.payload_size, h.payload);
			if (err)
				break;
		}
		/* Seqlock: the copy is whole only if nobody republished while we read. */
		err = read_header(fd, addr, &again);
		if (err == -EAGAIN)
			continue;
		if (err)
			break;
		err = -EAGAIN;
		if (again.published_ns != h.published_ns || again.payload != h.payload ||
		    again.payload_size != h.payload_size)
			continue;
		*payload = buf;
		*len = h.payload_size;
		*published_ns = h.published_ns;
		buf = NULL;
		err = 0;
		break;
	}
	free(buf);
	close(fd);
	return err;
}

procctx_msg *procctx__decode(const void *payload, size_t len)
{
	return opentelemetry__proto__processcontext__v1development__process_context__unpack(
		NULL, len, payload);
}

void procctx__free(procctx_msg *msg)
{
	if (msg)
		opentelemetry__proto__processcontext__v1development__process_context__free_unpacked(
			msg, NULL);
}

const char *procctx__resource_string(const procctx_msg *msg, const char *key)
{
	const Opentelemetry__Proto__Resource__V1__Resource *res = msg->resource;

	if (!res)
		return NULL;
	/* The last occurrence wins, as when a map is built from the list. */
	for (size_t i = res->n_attributes; i-- > 0;) {
		const Opentelemetry__Proto__Common__V1__KeyValue *kv = res->attributes[i];

		if (!kv->key || strcmp(kv->key, key))
			continue;
		if (kv->value && kv->value->value_case ==
				OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
			return kv->value->string_value;
		return NULL;
	}
	return NULL;
}

int procctx__decode_service(const void *payload, size_t len, char *buf, size_t size)
{
	procctx_msg *msg = procctx__decode(payload, len);
	const char *name;
	int err = -ENODATA;

	if (!msg)
		return -EBADMSG;
	name = procctx__resource_string(msg, "service.name");
	if (name && name[0]) {
		snprintf(buf, size, "%s", name);
		err = 0;
	}
	procctx__free(msg);
	return err;
}
