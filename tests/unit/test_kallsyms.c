/* DEPS: src/symbolize/kallsyms.c src/lib/buf.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
/* kallsyms parsing and lookup, on a written fixture and on the running kernel's table. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <unistd.h>

#include "symbolize/kallsyms.h"
#include "testlib.h"

static int write_temp(const char *content, char *path, size_t path_size)
{
	size_t len = strlen(content);
	int fd;

	snprintf(path, path_size, "/tmp/test_kallsyms.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (write(fd, content, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	close(fd);
	return 0;
}

/* Unsorted, with data symbols, aliases, modules, and a last line without a newline. */
static const char fixture_text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81002000 t local_fn\n"
				   "ffffffff81001000 T startup_64\n"
				   "ffffffff82000000 D some_data\n"
				   "ffffffff82001000 b bss_thing\n"
				   "ffffffff81003000 W weak_fn\n"
				   "ffffffff81003800 w weak_local\n"
				   "ffffffff81004000 r rodata_thing\n"
				   "ffffffff81002000 T alias_global\n"
				   "ffffffff81005000 A abs_thing\n"
				   "ffffffffc0123000 t foo\t[ext4]\n"
				   "ffffffffc0124000 T bar\t[ext4]\n"
				   "ffffffffc0100000 t baz\t[xfs]\n"
				   "ffffffffc0125000 d ext4_data\t[ext4]\n"
				   "not a kallsyms line\n"
				   "ffffffffc0130000 t bpf_prog_6deef7357e7b4530_sd_fw\t[bpf]";

struct want {
	uint64_t addr;
	const char *name;
	uint64_t start;
	const char *module;
};

TEST(fixture_lookups)
{
	static const struct want wants[] = {
	    {0xffffffff81000000, "_stext", 0xffffffff81000000, NULL},
	    {0xffffffff81000fff, "_stext", 0xffffffff81000000, NULL},
	    {0xffffffff81001000, "startup_64", 0xffffffff81001000, NULL},
	    /* Global beats local among aliases. */
	    {0xffffffff81002010, "alias_global", 0xffffffff81002000, NULL},
	    {0xffffffff81003000, "weak_fn", 0xffffffff81003000, NULL},
	    {0xffffffff81003900, "weak_local", 0xffffffff81003800, NULL},
	    /* Data symbols do not split the text symbol before them. */
	    {0xffffffff81004000, "weak_local", 0xffffffff81003800, NULL},
	    {0xffffffffc0100004, "baz", 0xffffffffc0100000, "xfs"},
	    {0xffffffffc0123000, "foo", 0xffffffffc0123000, "ext4"},
	    {0xffffffffc0124abc, "bar", 0xffffffffc0124000, "ext4"},
	    {0xffffffffc0130040, "bpf_prog_6deef7357e7b4530_sd_fw", 0xffffffffc0130000, "bpf"},
	};
	const char *module, *name;
	struct kallsyms *ks;
	char path[64];
	uint64_t start;
	int err;

	CHECK_EQ(write_temp(fixture_text, path, sizeof(path)), 0);
	err = kallsyms__load(path, &ks);
	unlink(path);
	CHECK_EQ(err, 0);
	CHECK_EQ(kallsyms__nr_symbols(ks), 9);
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];

		start = 0;
		module = "unset";
		name = kallsyms__lookup(ks, w->addr, &start, &module);
		if (!name || strcmp(name, w->name) || start != w->start ||
		    (w->module ? !module || strcmp(module, w->module) : module != NULL)) {
			FAILF("0x%" PRIx64 ": %s@0x%" PRIx64 " [%s], expected %s@0x%" PRIx64
			      " [%s]",
			      w->addr, name ? name : "(null)", start, module ? module : "core",
			      w->name, w->start, w->module ? w->module : "core");
			break;
		}
	}
	CHECK(kallsyms__lookup(ks, 0xffffffff80ffffff, &start, &module) == NULL);
	CHECK(kallsyms__lookup(ks, 0, NULL, NULL) == NULL);
	/* Far past the last symbol is no symbol at all. */
	CHECK(kallsyms__lookup(ks, 0xffffffffff000000, NULL, NULL) == NULL);
	CHECK(kallsyms__bytes(ks) >= 9 * 16);
	CHECK(kallsyms__bytes(ks) < 4096);
	kallsyms__free(ks);
}

/*
 * The file is read a buffer (64 KiB) at a time: lines that straddle two reads are whole, and
 * a line longer than the buffer (no symbol's) is skipped without losing the ones around it.
 */
TEST(read_across_buffers)
{
	size_t n = 20000, len = 0, cap = 4 << 20;
	char *text = malloc(cap), path[64], want[32];
	struct kallsyms *ks = NULL;
	const char *name;
	int err;

	CHECK(text != NULL);
	for (size_t i = 0; i < n; i++) {
		len += (size_t)snprintf(text + len, cap - len, "ffffffff81%06zx T fn_%zu\n", i * 16,
					i);
		if (i == n / 2) {
			len += (size_t)snprintf(text + len, cap - len, "ffffffff8f000000 T ");
			memset(text + len, 'x', 100000);
			len += 100000;
			text[len++] = '\n';
		}
	}
	text[len] = '\0';
	CHECK_EQ(write_temp(text, path, sizeof(path)), 0);
	free(text);
	err = kallsyms__load(path, &ks);
	unlink(path);
	CHECK_EQ(err, 0);
	CHECK_EQ(kallsyms__nr_symbols(ks), n);
	for (size_t i = 0; i < n; i += 997) {
		snprintf(want, sizeof(want), "fn_%zu", i);
		name = kallsyms__lookup(ks, 0xffffffff81000000ULL + i * 16 + 3, NULL, NULL);
		if (!name || strcmp(name, want)) {
			FAILF("symbol %zu: %s, expected %s", i, name ? name : "(null)", want);
			break;
		}
	}
	kallsyms__free(ks);
}

TEST(all_zero_is_eperm)
{
	struct kallsyms *ks = NULL;
	char path[64];
	int err;

	CHECK_EQ(write_temp("0000000000000000 T _stext\n"
			    "0000000000000000 D some_data\n"
			    "0000000000000000 t foo\t[ext4]\n",
			    path, sizeof(path)),
		 0);
	err = kallsyms__load(path, &ks);
	unlink(path);
	CHECK_EQ(err, -EPERM);
	CHECK(ks == NULL);
}

TEST(missing_file)
{
	struct kallsyms *ks = NULL;

	CHECK_EQ(kallsyms__load("/nonexistent/kallsyms", &ks), -ENOENT);
	kallsyms__free(NULL);
}

/* schedule's address, read without the code under test. */
static int schedule_addr(uint64_t *addr)
{
	char line[512];
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256], rest;
		uint64_t a;

		/* Core kernel only: a module line has a fourth column. */
		if (sscanf(line, "%" SCNx64 " %c %255s %c", &a, &type, name, &rest) == 3 &&
		    (type == 'T' || type == 't') && !strcmp(name, "schedule")) {
			*addr = a;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

TEST(real_kallsyms)
{
	const char *module = "unset", *name;
	uint64_t addr = 0, start = 0;
	struct kallsyms *ks;
	int err;

	if (schedule_addr(&addr))
		SKIP("no schedule in /proc/kallsyms");
	if (!addr)
		SKIP("kallsyms addresses are hidden (kptr_restrict)");
	err = kallsyms__load(NULL, &ks);
	CHECK_EQ(err, 0);
	CHECK(kallsyms__nr_symbols(ks) > 10000);
	name = kallsyms__lookup(ks, addr, &start, &module);
	CHECK_STR(name, "schedule");
	CHECK_EQ(start, addr);
	CHECK(module == NULL);
	name = kallsyms__lookup(ks, addr + 1, &start, &module);
	CHECK_STR(name, "schedule");
	CHECK_EQ(start, addr);
	kallsyms__free(ks);
}

int main(void)
{
	RUN(fixture_lookups);
	RUN(read_across_buffers);
	RUN(all_zero_is_eperm);
	RUN(missing_file);
	RUN(real_kallsyms);
	return test_summary();
}
