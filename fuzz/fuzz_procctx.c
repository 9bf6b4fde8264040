// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the OpenTelemetry process context (OTEP 4719, src/proc/procctx.c),
 * which autoprof reads out of any process that maps OTEL_CTX. Two readings of one input:
 *  - the protobuf payload: procctx__decode, the resource's strings, service.name;
 *  - the mapping: a 32-byte header ("OTEL_CTX", version, payload size, published_ns, payload
 *    address) and what follows, read by procctx__read_payload through /proc/self/mem from a
 *    buffer of this process holding the input (so its reader is the real one). A payload address
 *    below the input's size is taken as an offset into the input and made absolute here; others
 *    are left as they are (reads of whatever this process has there, or of nothing).
 *   make fuzz-procctx                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_procctx    replays fuzz/corpus/procctx/ as an ordinary test
 * Seeds (fuzz/gen_procctx_corpus.py): payloads with service.name and other attributes, and
 * mappings that hold them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/proc/procctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR_SIZE	32
#define HDR_PAYLOAD_AT	24

static void payload(const uint8_t *p, size_t len)
{
	procctx_msg *msg = procctx__decode(p, len);
	char name[64];

	if (msg) {
		const char *s = procctx__resource_string(msg, "service.name");

		if (s && strlen(s) > len)
			abort();
		procctx__free(msg);
	}
	if (!procctx__decode_service(p, len, name, sizeof(name)) && !memchr(name, '\0', sizeof(name)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	uint64_t published = 0, at;
	size_t len;
	void *p;
	int err;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	payload(buf, size);
	if (size >= HDR_SIZE) {
		memcpy(&at, buf + HDR_PAYLOAD_AT, sizeof(at));
		if (at < size) {
			at += (uintptr_t)buf;
			memcpy(buf + HDR_PAYLOAD_AT, &at, sizeof(at));
		}
	}
	err = procctx__read_payload((uint32_t)getpid(), (uintptr_t)buf, &published, &p, &len);
	if (!err) {
		if (len > PROCCTX_MAX_PAYLOAD || !published)
			abort();
		payload(p, len);
		free(p);
		/* Read again with the publication time known: nothing is copied. */
		if (procctx__read_payload((uint32_t)getpid(), (uintptr_t)buf, &published, &p,
					  &len) != 1 || p)
			abort();
	} else if (err > 0) {
		abort();
	}
	free(buf);
	return 0;
}
