// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what autoprof reads of a Lua process's memory to name a Lua frame
 * (src/runtime/luaproto.c): a function prototype's header, its chunk name (a TString, short or
 * long; LuaJIT's GCstr), and its line table (5.1 and 5.3's ints, 5.4's deltas with absolute
 * entries, LuaJIT's offsets of 1, 2 or 4 bytes), and the
 * name parsed from a source line. The input is the process's memory from address 0, read
 * through a bounds-checked reader as /proc/PID/mem would be (an address past it fails). Its
 * first bytes say what the sampler would hand over:
 *   [0]      the release: 5.1, 5.3, 5.4 or LuaJIT 2.1 by [0] % 4
 *   [8, 16)  the prototype's address, [16, 24) the saved pc (little-endian)
 * The rest, from [24], is also parsed as a source line for lua__name_from_source.
 *   make fuzz-luaproto                     (clang, ASan + UBSan; see fuzz/fuzz.mk)
 *   build/tests/unit/test_fuzz_luaproto    replays fuzz/corpus/luaproto/ as an ordinary test
 * Seeds (fuzz/gen_luaproto_corpus.py): a prototype of each release with a file chunk, a short
 * and a long name string and a line table.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/lua_abi.h"
#include "src/runtime/lua.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
	const uint8_t *data;
	size_t size;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct mem *m = ctx;

	if (addr > m->size || n > m->size - addr)
		return -EIO;
	memcpy(buf, m->data + addr, n);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t releases[] = {0x0501, 0x0503, 0x0504, LUA_VERSION_LUAJIT};
	struct mem m = {data, size};
	struct lua_func f;
	uint64_t proto, pc;
	char line[512], name[128];

	if (size < 24)
		return 0;
	memcpy(&proto, data + 8, 8);
	memcpy(&pc, data + 16, 8);
	if (!lua_func__read(releases[data[0] % 4], mem_read, &m, proto, &f)) {
		/* Its chunk is cut to 512 bytes; a line is of the table read, or 0. */
		if (!f.chunk || strlen(f.chunk) > 512 || (f.nr_lines && !f.lines))
			abort();
		lua_func__line(&f, pc);
		lua_func__clear(&f);
	}
	/* The tail as one source line, NUL-terminated and cut as lua.c cuts what it reads. */
	size -= 24;
	if (size > sizeof(line) - 1)
		size = sizeof(line) - 1;
	memcpy(line, data + 24, size);
	line[size] = '\0';
	if (lua__name_from_source(line, name, sizeof(name)) && strlen(name) >= sizeof(name))
		abort();
	return 0;
}
