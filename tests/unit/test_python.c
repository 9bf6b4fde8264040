/* DEPS: src/runtime/python.c src/runtime/pylines.c src/symbolize/elf.c src/lib/log.c src/lib/procmem.c tests/unit/python_stubs.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython frames: the line tables (3.10's co_linetable, the 3.11+ locations table) against what
 * the interpreter's own co_lines() said for the same function, and the per-version offset table
 * against the DWARF of every pyenv libpython 3.10-3.13 on the machine (skipped when none is).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include "src/runtime/python.h"
#include "symbolize/dso.h"
#include "src/lib/procmaps.h"
#include "src/proc/proctab.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwind.h"
#include "testlib.h"


/*
 * From CPython 3.10.13 and 3.11.7 compiling (first line 2):
 *   def f(n):
 *       s = 0
 *       for i in range(n):
 *           if i % 3:
 *               s += i
 *           else:
 *               s -= 1
 *       try:
 *           x = 1 / n
 *       except ZeroDivisionError:
 *           x = 0
 *   <200 empty lines>
 *       return s + x
 */
static const uint8_t lt310[] = {0x04, 0x01, 0x0c, 0x01, 0x08, 0x01, 0x0a, 0x01, 0x0a, 0x02, 0x02,
				0x01, 0x0a, 0x01, 0x00, 0x7f, 0x08, 0x4d, 0x00, 0x81, 0x0c, 0xb4,
				0x06, 0x01, 0x00, 0x7f, 0x08, 0x4b, 0x00, 0x81, 0x02, 0xb4};

/* Line of each code unit as co_lines() says (0: none). */
static const uint32_t lines310[] = {3,	3,  4,	4,  4,	 4,   4,   4,	5,   5,	 5,  5,
				    6,	6,  6,	6,  6,	 8,   8,   8,	8,   8,	 9,  10,
				    10, 10, 10, 10, 214, 214, 214, 214, 11,  11, 11, 11,
				    11, 11, 12, 12, 12,	 214, 214, 214, 214, 11};

static const uint8_t lt311[] = {
    0x80, 0x00, 0xd8, 0x08, 0x09, 0x80, 0x41, 0xdd, 0x0d, 0x12, 0x90, 0x31, 0x89, 0x58, 0x8c, 0x58,
    0xf0, 0x00, 0x04, 0x05, 0x13, 0xf0, 0x00, 0x04, 0x05, 0x13, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88,
    0x71, 0x89, 0x35, 0xf0, 0x00, 0x03, 0x09, 0x13, 0xd8, 0x0c, 0x0d, 0x90, 0x11, 0x89, 0x46, 0x88,
    0x41, 0x88, 0x41, 0xe0, 0x0c, 0x0d, 0x90, 0x11, 0x89, 0x46, 0x88, 0x41, 0x88, 0x41, 0xf0, 0x02,
    0x03, 0x05, 0x0e, 0xd8, 0x0c, 0x0d, 0x90, 0x01, 0x89, 0x45, 0x88, 0x01, 0x88, 0x01, 0xf8, 0xdd,
    0x0b, 0x1c, 0xf0, 0x00, 0x01, 0x05, 0x0e, 0xf0, 0x00, 0x01, 0x05, 0x0e, 0xf0, 0x00, 0x01, 0x05,
    0x0e, 0xd8, 0x0c, 0x0d, 0x88, 0x01, 0x88, 0x01, 0x88, 0x01, 0xf0, 0x03, 0x01, 0x05, 0x0e, 0xf8,
    0xf8, 0xf8, 0xf0, 0x56, 0x06, 0x00, 0x0c, 0x0d, 0x88, 0x71, 0x89, 0x35, 0x80, 0x4c};

/* Line of each code unit as co_lines() says (0: none). */
static const uint32_t lines311[] = {
    2,	3,  3,	4,  4,	4,  4,	4,  4,	4,  4,	4,  4,	4, 4, 4,  4,   4,   4,	 4,   5,  5, 5,
    5,	5,  6,	6,  6,	6,  6,	6,  8,	8,  8,	8,  8,	8, 9, 10, 10,  10,  10,	 10,  10, 0, 11,
    11, 11, 11, 11, 11, 11, 11, 11, 12, 12, 12, 12, 11, 0, 0, 0,  214, 214, 214, 214, 214};

TEST(line_table_310)
{
	for (uint32_t i = 0; i < sizeof(lines310) / sizeof(lines310[0]); i++)
		CHECK_EQ(python__line_310(lt310, sizeof(lt310), 2, i), lines310[i]);
	/* Past the table, and an empty table: the first line. */
	CHECK_EQ(python__line_310(lt310, sizeof(lt310), 2, 1000), 2);
	CHECK_EQ(python__line_310(lt310, 0, 7, 0), 7);
}

TEST(line_table_311)
{
	for (uint32_t i = 0; i < sizeof(lines311) / sizeof(lines311[0]); i++) {
		/* Instructions without a line are named by the function's first line. */
		uint32_t want = lines311[i] ? lines311[i] : 2;

		CHECK_EQ(python__line_311(lt311, sizeof(lt311), 2, i), want);
	}
	CHECK_EQ(python__line_311(lt311, sizeof(lt311), 2, 1000), 2);
	/* A table cut inside an entry stops there. */
	CHECK_EQ(python__line_311(lt311, 3, 2, 40), 2);
}

TEST(unknown_versions)
{
	struct python_field f[32];

	CHECK_EQ(python__fields(0x0309, f, 32), 0);
	CHECK_EQ(python__fields(0x030e, f, 32), 0);
	CHECK(python__fields(0x030b, f, 32) > 10);
}

/* The type's DIE: a complete struct by tag, or a typedef's target. */
static bool find_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (!dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dw, off + hsize, &cu) && !dwarf_child(&cu, &die)) {
			do {
				int tag = dwarf_tag(&die);
				const char *n = dwarf_diename(&die);
				Dwarf_Attribute a;

				if (!n || strcmp(n, name) || dwarf_hasattr(&die, DW_AT_declaration))
					continue;
				if (tag == DW_TAG_structure_type &&
				    dwarf_hasattr(&die, DW_AT_byte_size)) {
					*out = die;
					return true;
				}
				if (tag == DW_TAG_typedef && dwarf_attr(&die, DW_AT_type, &a) &&
				    dwarf_formref_die(&a, out) &&
				    dwarf_tag(out) == DW_TAG_structure_type &&
				    dwarf_hasattr(out, DW_AT_byte_size))
					return true;
			} while (!dwarf_siblingof(&die, &die));
		}
		off = next;
	}
	return false;
}

/* The offset of a member path ("a.b") in a struct, or -1. */
static long member_offset(Dwarf_Die *type, const char *path)
{
	char head[64];
	const char *dot = strchr(path, '.');
	size_t len = dot ? (size_t)(dot - path) : strlen(path);
	Dwarf_Die child, sub;

	if (len >= sizeof(head) || dwarf_child(type, &child))
		return -1;
	memcpy(head, path, len);
	head[len] = '\0';
	do {
		const char *n = dwarf_diename(&child);
		Dwarf_Attribute a;
		Dwarf_Word off;
		long rest;

		if (dwarf_tag(&child) != DW_TAG_member || !n || strcmp(n, head))
			continue;
		if (!dwarf_attr(&child, DW_AT_data_member_location, &a) ||
		    dwarf_formudata(&a, &off))
			return -1;
		if (!dot)
			return (long)off;
		if (!dwarf_attr(&child, DW_AT_type, &a) || !dwarf_formref_die(&a, &sub))
			return -1;
		while (dwarf_tag(&sub) == DW_TAG_typedef && dwarf_attr(&sub, DW_AT_type, &a) &&
		       dwarf_formref_die(&a, &sub))
			;
		rest = member_offset(&sub, dot + 1);
		return rest < 0 ? -1 : (long)off + rest;
	} while (!dwarf_siblingof(&child, &child));
	return -1;
}

TEST(offsets_match_dwarf)
{
	const char *home = getenv("PYENV_ROOT");
	char pattern[PATH_MAX];
	int checked = 0;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/versions/3.1[0-3].*/lib/libpython3.1[0-3].so.1.0",
		 home ? home : "/root/.pyenv");
	if (glob(pattern, 0, NULL, &g)) {
		SKIP("no pyenv libpython 3.10-3.13 under %s", home ? home : "/root/.pyenv");
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		unsigned int minor;
		struct python_field f[32];
		size_t n;
		Dwarf *dw;
		int fd;

		if (sscanf(strrchr(path, '/'), "/libpython3.%u.so", &minor) != 1)
			continue;
		n = python__fields(0x0300 | minor, f, 32);
		CHECK(n > 10);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		CHECK(fd >= 0);
		dw = dwarf_begin(fd, DWARF_C_READ);
		if (!dw) {
			close(fd);
			continue; /* a build without DWARF says nothing */
		}
		for (size_t k = 0; k < n; k++) {
			Dwarf_Die type;
			long got;

			if (!find_type(dw, f[k].type, &type)) {
				FAILF("3.%u: no struct %s", minor, f[k].type);
				break;
			}
			got = f[k].member[0] ? member_offset(&type, f[k].member)
					     : (long)dwarf_bytesize(&type);
			if (got != (long)f[k].offset) {
				FAILF("3.%u: %s.%s at %ld, the table says %u", minor, f[k].type,
				      f[k].member, got, f[k].offset);
				break;
			}
		}
		dwarf_end(dw);
		close(fd);
		if (test_cur_failed)
			break;
		checked++;
	}
	globfree(&g);
	if (!test_cur_failed && !checked)
		SKIP("no libpython with DWARF");
}

int main(void)
{
	RUN(line_table_310);
	RUN(line_table_311);
	RUN(unknown_versions);
	RUN(offsets_match_dwarf);
	return test_summary();
}
