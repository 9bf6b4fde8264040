#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Writes the seeds of fuzz/corpus/pyframes/ (see fuzz/fuzz_pyframes.c): a process's memory
# holding one code object, its name, file and line table, laid out with the offsets of
# src/runtime/python.c's table (copied here: co_filename, co_name, co_firstlineno,
# co_linetable, co_code_adaptive, sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject)).
#   python3 fuzz/gen_pyframes_corpus.py fuzz/corpus/pyframes
import struct
import sys

CODE_TYPE = 0x7F00C0DE0000
OFFSETS = {
    0: (104, 112, 40, 120, 0, 48, 72),  # 3.10
    1: (112, 128, 72, 136, 184, 48, 72),  # 3.11
    2: (112, 128, 68, 136, 192, 40, 56),  # 3.12
    3: (112, 128, 68, 136, 200, 40, 56),  # 3.13
}


def put(mem, off, data):
    mem[off:off + len(data)] = data


def pystr(mem, at, text, kind, ascii_data, compact_data):
    """A compact str object: length at 16, state at 32, characters after the header."""
    ascii = kind == 1 and all(ord(c) < 128 for c in text)
    state = 1 << 5 | kind << 2 | (1 << 6 if ascii else 0)
    put(mem, at + 16, struct.pack("<Q", len(text)))
    put(mem, at + 32, struct.pack("<I", state))
    enc = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}[kind]
    put(mem, at + (ascii_data if ascii else compact_data), text.encode(enc))


def image(ver, kind):
    co_filename, co_name, co_first, co_lt, co_adaptive, ascii_data, compact_data = OFFSETS[ver]
    mem = bytearray(1024)
    code, name, file, lt = 0x40, 0x180, 0x200, 0x300
    if ver == 0:
        table = bytes([6, 1, 4, 2, 8, 0x80, 2, 1])  # (pc delta, line delta) pairs
        instr = 5
    else:
        # locations: short forms (code 10+: line delta code - 10), one long form (14)
        table = bytes([0x80 | 11 << 3 | 1, 0, 0, 0x80 | 13 << 3 | 2, 4, 0x80 | 15 << 3])
        instr = code + co_adaptive + 6
    put(mem, 0, struct.pack("<BxxxxxxxQQ", ver, code, instr))
    put(mem, code + 8, struct.pack("<Q", CODE_TYPE))
    put(mem, code + co_first, struct.pack("<i", 12))
    put(mem, code + co_name, struct.pack("<Q", name))
    put(mem, code + co_filename, struct.pack("<Q", file))
    put(mem, code + co_lt, struct.pack("<Q", lt))
    pystr(mem, name, {1: "Handler.run", 2: "h\u00e9llo\u4e16", 4: "f\U0001f600"}[kind], kind,
          ascii_data, compact_data)
    pystr(mem, file, "/srv/app/handler.py", 1, ascii_data, compact_data)
    put(mem, lt + 16, struct.pack("<Q", len(table)))
    put(mem, lt + 32, table)
    return bytes(mem)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus/pyframes"
    for ver in OFFSETS:
        for kind in (1, 2, 4):
            with open(f"{out}/py3.{10 + ver}-kind{kind}", "wb") as f:
                f.write(image(ver, kind))


main()
