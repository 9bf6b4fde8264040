// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what autoprof reads from a JVM (src/runtime/jvm.c, jvmattach.c): the
 * attach API's replies, which any process listening on the JVM's socket may write
 * (jvmattach__parse_reply: the status line, the text copied out, cut to the caller's buffer as
 * jvm.c's are), and the names HotSpot writes in the perf map it is asked for (jcmd
 * Compiler.perfmap), split as users see them (jit_name__split: "RETURN pkg.Class.m(ARGS)").
 * The input is the reply, cut as recv into jvmattach.c's 4 KiB buffer cuts it; each of its
 * lines is also one name. fuzz_perfmap covers the perf map's parser itself.
 *   make fuzz-jvm                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_jvm    replays fuzz/corpus/jvm/ as an ordinary test
 * Seeds: replies to printflag and jcmd (success, failure, malformed) and HotSpot names.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/runtime/jvmattach.h"
#include "symbolize/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLY_MAX 4096 /* jvmattach.c's reply buffer */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = size < REPLY_MAX - 1 ? size : REPLY_MAX - 1;
	static const size_t outs[] = { 0, 1, 128, 256 };
	char *reply = malloc(len + 1);

	if (!reply)
		abort();
	memcpy(reply, data, len);
	reply[len] = '\0';
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		char *out = outs[i] ? malloc(outs[i]) : NULL;
		int err;

		/* As jvmattach__run leaves it when no reply comes. */
		if (out)
			out[0] = '\0';
		err = jvmattach__parse_reply(reply, out, outs[i]);

		if (err && err != -EPROTO && err != -EBADMSG)
			abort();
		if (out && !memchr(out, '\0', outs[i]))
			abort();
		free(out);
	}
	jvmattach__parse_reply(reply, NULL, 0);
	for (char *line = reply, *next; line; line = next) {
		struct jit_name j;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		jit_name__split(line, &j);
		if (j.function_len > strlen(line) && strcmp(j.function, "(anonymous)"))
			abort();
	}
	free(reply);
	return 0;
}
