/* DEPS: src/runtime/golabels.c src/symbolize/elf.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Go pprof labels: the Go version from .go.buildinfo, the per-release offset table, and the
 * probe of real binaries built by tests/targets/tracectx/tracectx.mk with the Go on this machine:
 * the table must agree with what the binary's own DWARF says.
 */
#include <fcntl.h>
#include <libelf.h>
#include <unistd.h>

#include "src/runtime/golabels.h"
#include "testlib.h"

/* name under $BUILD/tctargets, or under $BUILD when it has a slash (fixtures/...). */
static const char *target_path(const char *name)
{
	static char path[PATH_MAX];
	const char *build = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/%s%s", build && *build ? build : "build",
		 strchr(name, '/') ? "" : "tctargets/", name);
	return path;
}

/* A .go.buildinfo of Go 1.18+: magic, pointer size, flags (inline strings), then the version. */
static size_t buildinfo(uint8_t *buf, uint8_t flags, const char *version)
{
	size_t n = strlen(version);

	memset(buf, 0, 64);
	memcpy(buf, "\xff Go buildinf:", 14);
	buf[14] = 8;
	buf[15] = flags;
	buf[32] = (uint8_t)n;
	memcpy(buf + 33, version, n);
	/* The module info follows: empty. */
	buf[33 + n] = 0;
	return 34 + n;
}

TEST(buildinfo_inline)
{
	uint8_t buf[64];
	char v[32];
	size_t n = buildinfo(buf, 2, "go1.19.8");

	CHECK_EQ(golabels__buildinfo_version(buf, n, v, sizeof(v)), 0);
	CHECK_STR(v, "go1.19.8");
}

TEST(buildinfo_malformed)
{
	uint8_t buf[64];
	char v[32], small[4];
	size_t n = buildinfo(buf, 2, "go1.19.8");

	/* Pointer form (before 1.18): read through the ELF file instead. */
	buf[15] = 0;
	CHECK_EQ(golabels__buildinfo_version(buf, n, v, sizeof(v)), -ENOENT);
	buf[15] = 2;
	CHECK_EQ(golabels__buildinfo_version(buf, n, small, sizeof(small)), -EINVAL);
	/* The length runs past the section. */
	CHECK_EQ(golabels__buildinfo_version(buf, 36, v, sizeof(v)), -EINVAL);
	CHECK_EQ(golabels__buildinfo_version(buf, 20, v, sizeof(v)), -EINVAL);
	buf[1] = 'X';
	CHECK_EQ(golabels__buildinfo_version(buf, n, v, sizeof(v)), -EINVAL);
}

TEST(version_table)
{
	static const struct {
		const char *version;
		int err;
		uint16_t labels;
	} cases[] = {
		{ "go1.10.8", -ENOTSUP, 0 },
		{ "go1.11", 0, 344 },
		{ "go1.16.15", 0, 344 },
		{ "go1.17", 0, 360 },
		{ "go1.19.8", 0, 360 },
		{ "go1.20rc1", 0, 360 },
		{ "go1.21.0", 0, 344 },
		{ "go1.22.3", 0, 344 },
		{ "go1.23.1", 0, 352 },
		{ "devel go1.23-abcdef Tue Jan 1", 0, 352 },
		/* Labels in a slice from Go 1.24: not read. */
		{ "go1.24.0", -ENOTSUP, 0 },
		{ "go2.0", -EINVAL, 0 },
		{ "go1.", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct golabels_offsets o = { 0 };

		CHECK_EQ(golabels__version_offsets(cases[i].version, &o), cases[i].err);
		if (cases[i].err)
			continue;
		CHECK_EQ(o.g_labels, cases[i].labels);
		CHECK_EQ(o.g_m, 48);
		CHECK_EQ(o.m_curg, 192);
	}
}

/* Probes a built target: 0 or a negative errno, -ENOENT when it is not built. */
static int probe_file(const char *path, struct golabels_offsets *o)
{
	Elf *elf;
	int fd, err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? golabels__probe(fd, elf, o) : -EINVAL;
	elf_end(elf);
	close(fd);
	return err;
}

static void check_go_target(const char *name, bool want_dwarf, bool want_tlsg)
{
	struct golabels_offsets o, table = { 0 };
	int err;

	err = probe_file(target_path(name), &o);
	if (err == -ENOENT)
		SKIP("%s not built (make %s)", target_path(name), target_path(name));
	CHECK_EQ(err, 0);
	CHECK(!strncmp(o.version, "go1.", 4));
	CHECK_EQ(o.from_dwarf, want_dwarf);
	CHECK_EQ(o.tlsg_found, want_tlsg);
	if (want_tlsg)
		CHECK_EQ(o.tlsg, 0);
	/* The version table must say what this Go's DWARF says. */
	CHECK_EQ(golabels__version_offsets(o.version, &table), 0);
	CHECK_EQ(o.g_m, table.g_m);
	CHECK_EQ(o.m_curg, table.m_curg);
	CHECK_EQ(o.g_labels, table.g_labels);
	/* Again, from the cache. */
	memset(&o, 0, sizeof(o));
	CHECK_EQ(probe_file(target_path(name), &o), 0);
	CHECK_EQ(o.g_labels, table.g_labels);
	CHECK_EQ(o.from_dwarf, want_dwarf);
}

TEST(probe_go_internal_link)
{
	check_go_target("tctx_go", true, false);
}

TEST(probe_go_external_link)
{
	check_go_target("tctx_go_cgo", true, true);
}

TEST(probe_go_stripped)
{
	check_go_target("tctx_go_stripped", false, false);
}

/* Go's linker building a PIE: a PT_TLS of g alone, runtime.tlsg not in .symtab. */
TEST(probe_go_pie)
{
	check_go_target("fixtures/gohello-pie", true, false);
}

TEST(probe_not_go)
{
	struct golabels_offsets o;

	CHECK_EQ(probe_file("/bin/sh", &o), -ENODATA);
}

int main(void)
{
	RUN(buildinfo_inline);
	RUN(buildinfo_malformed);
	RUN(version_table);
	RUN(probe_go_internal_link);
	RUN(probe_go_external_link);
	RUN(probe_go_stripped);
	RUN(probe_go_pie);
	RUN(probe_not_go);
	return test_summary();
}
