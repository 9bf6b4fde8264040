// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the YAML configuration file (src/config/config.c over libyaml): the input
 * is the file, served from a memfd and named by --config.file=/proc/self/fd/N as a user would
 * name it. A file that loads must print (config__print_yaml) as a file that loads again to the
 * same settings.
 *   make fuzz-config                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_config    replays fuzz/corpus/config/ as an ordinary test
 * Seeds: config/autoprof.yaml, the flat form, anchors and aliases, wrong kinds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Errors go to stderr by design: to /dev/null here (sanitizers write to fd 2, not to it). */
static enum config_result load(struct config *cfg, int fd)
{
	static FILE *null;
	char flag[96];
	char *argv[] = { "autoprof", flag, NULL };
	FILE *saved = stderr;
	enum config_result ret;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!null)
		abort();
	snprintf(flag, sizeof(flag), "--config.file=%s", fuzz__file_path(fd));
	stderr = null;
	ret = config__load(cfg, 2, argv);
	stderr = saved;
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg, again;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int fd;

	fd = fuzz__file(data, size);
	if (load(&cfg, fd) != CONFIG_OK)
		return 0;
	f = open_memstream(&text, &len);
	if (!f)
		abort();
	config__print_yaml(&cfg, f);
	fclose(f);
	fd = fuzz__file((const uint8_t *)text, len);
	if (load(&again, fd) != CONFIG_OK || memcmp(&cfg, &again, sizeof(cfg)))
		abort();
	free(text);
	return 0;
}
