/* DEPS: src/runtime/hotspot.c src/memory/memsites.c src/runtime/golabels.c src/lib/x86insn.c src/symbolize/elf.c src/lib/procmem.c src/lib/log.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * HotSpot: class names in Java's spelling, and the probes of a JDK's libjvm.so (AllocTracer,
 * by its .symtab; a copy stripped of it is told apart as a JVM that cannot be probed).
 */
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "src/lib/procmaps.h"
#include "src/memory/memsites.h"
#include "src/runtime/hotspot.h"
#include "testlib.h"

static const char *java_name(const char *internal, size_t n)
{
	static char buf[64];

	if (hotspot__java_name(internal, strlen(internal), buf, n))
		return "(error)";
	return buf;
}

TEST(java_names)
{
	CHECK_STR(java_name("java/lang/String", 64), "java.lang.String");
	CHECK_STR(java_name("[B", 64), "byte[]");
	CHECK_STR(java_name("[[I", 64), "int[][]");
	CHECK_STR(java_name("[Z", 64), "boolean[]");
	CHECK_STR(java_name("[Ljava/lang/String;", 64), "java.lang.String[]");
	CHECK_STR(java_name("[[Lcom/example/Order;", 64), "com.example.Order[][]");
	CHECK_STR(java_name("Hot$Inner", 64), "Hot$Inner");
	CHECK_STR(java_name("evil\n<b>\x1b", 64), "evil?<b>?"); /* no control characters */
	/* Cut to fit, always terminated; an array's brackets only whole. */
	CHECK_STR(java_name("java/lang/String", 5), "java");
	CHECK_STR(java_name("[B", 7), "byte[]");
	CHECK_STR(java_name("[B", 6), "byte");
	/* Descriptors that name no type. */
	CHECK_STR(java_name("[", 64), "(error)");
	CHECK_STR(java_name("[Q", 64), "(error)");
	CHECK_STR(java_name("[L;", 64), "(error)");
	CHECK_STR(java_name("[Ljava/lang/String", 64), "(error)");
	CHECK_STR(java_name("[\xc2", 64), "(error)"); /* not 'B' by its low bits */
}

static const char *libjvm(void)
{
	static char path[4096];
	glob_t g;

	if (glob("/usr/lib/jvm/*/lib/server/libjvm.so", 0, NULL, &g))
		return NULL;
	snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	return path;
}

static int sites_of(const char *path, struct memsites *ms)
{
	struct map_entry e = {.start = 0x7f0000000000, .end = 0x7f0001000000, .path = path};
	int fd = open(path, O_RDONLY | O_CLOEXEC), nr;

	if (fd < 0)
		return -1;
	nr = memsites__find(fd, &e, ms);
	close(fd);
	return nr;
}

TEST(libjvm_alloc_tracer_probed)
{
	const char *path = libjvm();
	struct memsites ms;
	int nr;

	if (!path)
		SKIP("no JDK (/usr/lib/jvm/*/lib/server/libjvm.so)");
	nr = sites_of(path, &ms);
	CHECK_EQ(nr, 2);
	CHECK_EQ(ms.mode, MEMSITES_JAVA);
	CHECK(!ms.jvm_unprobed);
	CHECK_EQ(ms.sites[0].fn, MEMORY_FN_JAVA_TLAB);
	CHECK_EQ(ms.sites[1].fn, MEMORY_FN_JAVA_OUTSIDE);
	CHECK(ms.sites[0].offset && ms.sites[0].offset != ms.sites[1].offset);
	memsites__release(&ms);
}

TEST(libjvm_stripped_is_a_jvm_not_probed)
{
	const char *path = libjvm();
	char cmd[8400], copy[] = "/tmp/autoprof-libjvm-XXXXXX";
	struct memsites ms;
	int fd, nr;

	if (!path)
		SKIP("no JDK (/usr/lib/jvm/*/lib/server/libjvm.so)");
	fd = mkstemp(copy);
	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o %s %s", copy, path);
	CHECK_EQ(system(cmd), 0);
	nr = sites_of(copy, &ms);
	unlink(copy);
	CHECK_EQ(nr, 0);
	CHECK(ms.jvm_unprobed);
	CHECK_EQ(ms.mode, MEMSITES_JAVA);
	memsites__release(&ms);
}

int main(void)
{
	RUN(java_names);
	RUN(libjvm_alloc_tracer_probed);
	RUN(libjvm_stripped_is_a_jvm_not_probed);
	return test_summary();
}
