// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs a libFuzzer target on every file of a corpus directory, without libFuzzer, as a unit test:
 * one "PASS corpus/NAME" line per file (a crash fails the whole run). Each input is copied into a
 * buffer of exactly its size, so a read past it is a read past the allocation.
 *   replay [DIR]     (default: the corpus the binary was built for, FUZZ_CORPUS)
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay(const char *dir, const char *name)
{
	char path[4096];
	uint8_t *buf;
	long size;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	buf = malloc(size ? size : 1);
	if (!buf || fread(buf, 1, size, f) != (size_t)size) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, size);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : FUZZ_CORPUS;
	char **names = NULL;
	size_t nr = 0, cap = 0;
	struct dirent *de;
	int failed = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		printf("FAIL corpus: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (nr == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				return 1;
		}
		names[nr++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, nr, sizeof(*names), name_cmp);
	for (size_t i = 0; i < nr; i++) {
		int err = replay(dir, names[i]);

		if (err) {
			printf("FAIL corpus/%s: %s\n", names[i], strerror(-err));
			failed = 1;
		} else {
			printf("PASS corpus/%s\n", names[i]);
		}
		fflush(stdout);
		free(names[i]);
	}
	free(names);
	if (!nr) {
		printf("FAIL corpus: %s is empty\n", dir);
		failed = 1;
	}
	return failed;
}
