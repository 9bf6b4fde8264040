#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Writes the seeds of fuzz/corpus/luaproto/ (see fuzz/fuzz_luaproto.c): a process's memory
# holding one Lua function prototype, its chunk name and its line table, laid out with the
# offsets of src/runtime/luaproto.c's table (copied here), then a source line defining it;
# LuaJIT 2.1's with line tables of each width.
#   python3 fuzz/gen_luaproto_corpus.py fuzz/corpus/luaproto
import os
import struct
import sys

PROTO, SOURCE, LINES, ABS = 0x100, 0x200, 0x400, 0x600
# release byte: (proto tag, source, linedefined, lastlinedefined, code, sizelineinfo, lineinfo,
# sizeabslineinfo, abslineinfo, string tag, short length byte or None)
RELEASES = {
    "5.1": (0, 9, 64, 96, 100, 24, 84, 40, None, None, 4, None),
    "5.3": (1, 9, 104, 40, 44, 56, 28, 72, None, None, 0x04, 11),
    "5.4": (2, 10, 112, 44, 48, 64, 28, 88, 40, 96, 0x04, 11),
}
SOURCE_LINES = [b"local function lua_hot(n)", b"function M.handler:run(req)",
                b"local lua_cold = function()", b"  x = 1 -- not a definition"]


def put(mem, off, data):
    mem[off:off + len(data)] = data


def seed(rel, chunk, long_string, source_line):
    (byte, tag, src, ldef, llast, code, nlines, lines, nabs, absl, stag, shr) = RELEASES[rel]
    mem = bytearray(0x700)
    put(mem, 0, bytes([byte]))
    put(mem, 8, struct.pack("<QQ", PROTO, 0x10000 + 4 * 5))
    put(mem, PROTO + 8, bytes([tag]))
    put(mem, PROTO + src, struct.pack("<Q", SOURCE))
    put(mem, PROTO + ldef, struct.pack("<ii", 10, 20))
    put(mem, PROTO + code, struct.pack("<Q", 0x10000))
    put(mem, PROTO + nlines, struct.pack("<i", 8))
    put(mem, PROTO + lines, struct.pack("<Q", LINES))
    if nabs is None:
        put(mem, LINES, struct.pack("<8i", *range(11, 19)))
    else:
        # 5.4: deltas from linedefined, one absolute entry (instruction 4 at line 17).
        put(mem, LINES, struct.pack("<8b", 1, 1, 1, 1, -0x80, 1, 1, 1))
        put(mem, PROTO + nabs, struct.pack("<i", 1))
        put(mem, PROTO + absl, struct.pack("<Q", ABS))
        put(mem, ABS, struct.pack("<ii", 4, 17))
    put(mem, SOURCE + 8, bytes([stag | (0x10 if long_string and shr else 0)]))
    if shr is not None and not long_string:
        put(mem, SOURCE + shr, bytes([len(chunk)]))
    else:
        put(mem, SOURCE + 16, struct.pack("<Q", len(chunk)))
    put(mem, SOURCE + 24, chunk)
    return bytes(mem[:24]) + source_line + bytes(mem[24 + len(source_line):])


def seed_luajit(numline, source_line):
    """LuaJIT 2.1's GCproto (gct 7 at 9, sizebc 12, chunkname 64, firstline 72, numline 76,
    lineinfo 80, bytecode at +104) and GCstr (gct 4 at 9, len 20, characters at 24)."""
    width = 1 if numline < 256 else 2 if numline < 65536 else 4
    mem = bytearray(0x700)
    put(mem, 0, bytes([3]))
    put(mem, 8, struct.pack("<QQ", PROTO, PROTO + 104 + 4 * 5))
    put(mem, PROTO + 9, bytes([7]))
    put(mem, PROTO + 12, struct.pack("<I", 8))
    put(mem, PROTO + 64, struct.pack("<Q", SOURCE))
    put(mem, PROTO + 72, struct.pack("<ii", 10, numline))
    put(mem, PROTO + 80, struct.pack("<Q", LINES))
    fmt = {1: "<7B", 2: "<7H", 4: "<7I"}[width]
    put(mem, LINES, struct.pack(fmt, *range(1, 8)))
    chunk = b"@/usr/local/openresty/lualib/app.lua"
    put(mem, SOURCE + 9, bytes([4]))
    put(mem, SOURCE + 20, struct.pack("<I", len(chunk)))
    put(mem, SOURCE + 24, chunk)
    return bytes(mem[:24]) + source_line + bytes(mem[24 + len(source_line):])


def main(out):
    os.makedirs(out, exist_ok=True)
    for i, rel in enumerate(RELEASES):
        for long_string in (False, True):
            chunk = b"@/srv/app/" + (b"handlers/" * 8 if long_string else b"") + b"app.lua"
            name = "lua%s-%s" % (rel, "long" if long_string else "short")
            with open(os.path.join(out, name), "wb") as f:
                f.write(seed(rel, chunk, long_string, SOURCE_LINES[(i * 2 + long_string) % 4]))
    for numline in (20, 300, 70000):
        with open(os.path.join(out, "luajit-lines%d" % numline), "wb") as f:
            f.write(seed_luajit(numline, SOURCE_LINES[numline % 4]))


if __name__ == "__main__":
    main(sys.argv[1])
