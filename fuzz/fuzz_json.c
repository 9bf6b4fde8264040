// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the JSON request bodies autoprof parses: POST /api/v1/probes
 * (probespec__parse, src/probes/probespec.c) and the memory-target requests (memtarget__parse,
 * src/memory/memtarget.c), with the config forms of both (probes.attach entries,
 * memory.targets entries) and the durations and locations inside them. The input is the body,
 * NUL-terminated as the HTTP server hands it over, in a buffer of its exact size.
 *   make fuzz-json                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_json    replays fuzz/corpus/json/ as an ordinary test
 * Seeds: valid and invalid bodies of each kind.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/probes/probespec.h"
#include "src/memory/memtarget.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A field the parser filled must end inside it. */
#define TERMINATED(a) (memchr((a), '\0', sizeof(a)) != NULL)

static void check_probe(int err, const struct probe_spec *p, const char *why, size_t why_len)
{
	if (err && (err != -EINVAL || !memchr(why, '\0', why_len)))
		abort();
	if (!err && (!TERMINATED(p->binary) || !TERMINATED(p->function) ||
		     !TERMINATED(p->location) || !TERMINATED(p->name)))
		abort();
	/* Every capture kept is one the DWARF resolver's grammar accepts. */
	if (!err && p->nr_captures > PROBE_CAPTURES_MAX)
		abort();
	for (uint32_t i = 0; !err && i < p->nr_captures; i++)
		if (!TERMINATED(p->capture[i]) || probespec__capture(p->capture[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = malloc(size + 1), why[256], file[256];
	struct memtarget_spec m;
	struct probe_spec p;
	unsigned int line;
	uint64_t ns;
	int err;

	if (!body)
		abort();
	memcpy(body, data, size);
	body[size] = '\0';
	memset(why, 0x55, sizeof(why));
	err = probespec__parse(body, &p, why, sizeof(why));
	check_probe(err, &p, why, sizeof(why));
	err = probespec__parse_short(body, size, &p, why, sizeof(why));
	check_probe(err, &p, why, sizeof(why));
	err = memtarget__parse(body, &m, why, sizeof(why));
	if ((err && !memchr(why, '\0', sizeof(why))) || (!err && !TERMINATED(m.pattern)))
		abort();
	err = memtarget__parse_config(body, &m, why, sizeof(why));
	if ((err && !memchr(why, '\0', sizeof(why))) || (!err && !TERMINATED(m.pattern)))
		abort();
	probespec__duration(body, &ns);
	if (!probespec__location(body, file, sizeof(file), &line) && !TERMINATED(file))
		abort();
	free(body);
	return 0;
}
