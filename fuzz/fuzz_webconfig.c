// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the web configuration parser (src/http/webconfig.c): the input is the
 * YAML text of a --web.config.file. Parsed, its accessors read back; a parse that fails must say
 * why, one that succeeds must hold headers with names and a TLS section with its files named.
 * bcrypt is not run: webconfig__authenticate is crypt_r's to get right.
 *   make fuzz-webconfig        (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_webconfig   replays fuzz/corpus/webconfig/ as an ordinary test
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/webconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct webconfig_header *h;
	const struct webconfig_tls *tls;
	struct webconfig *wc = NULL;
	char why[512] = "";
	size_t n;

	if (webconfig__parse((const char *)data, size, &wc, why, sizeof(why))) {
		if (!why[0] || wc)
			abort();
		return 0;
	}
	n = webconfig__headers(wc, &h);
	for (size_t i = 0; i < n; i++)
		if (!h[i].name || !h[i].name[0] || !h[i].value)
			abort();
	tls = webconfig__tls(wc);
	if (tls && (!tls->cert_file || !tls->key_file || strlen(tls->priorities) >= 96))
		abort();
	(void)webconfig__auth_required(wc);
	webconfig__free(wc);
	return 0;
}
