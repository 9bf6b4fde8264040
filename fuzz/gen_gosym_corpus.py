#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Writes the seeds of fuzz/corpus/gosym/: small .gopclntab tables laid out as Go's
# runtime/symtab.go does (see src/symbolize/gosym.c), one per layout gosym.c reads.
#   python3 fuzz/gen_gosym_corpus.py fuzz/corpus/gosym
import struct
import sys

from corpus_lib import varint as uvarint

MAGIC = {"1.16": 0xFFFFFFFA, "1.18": 0xFFFFFFF0, "1.20": 0xFFFFFFF1}
TEXT = 0x401000


def pcvalue(pairs):
    """pairs of (value, pc length) from value -1 at the entry; a 0 delta ends it."""
    out, val = bytearray(), -1
    for v, n in pairs:
        d = v - val
        out += uvarint((d << 1) if d >= 0 else ((-d << 1) - 1))
        out += uvarint(n)
        val = v
    return bytes(out + b"\0")


def table(ver, ps):
    funcs = [("main.main", 0x40, 10), ("main.hotLoop", 0x30, 20), ("runtime.goexit", 0x10, 0)]
    names = bytearray()
    files = b"/src/main.go\0/usr/lib/go/src/runtime/asm_amd64.s\0"
    cutab = struct.pack("<II", 0, 13)
    pctab = bytearray(b"\0")
    rows = []
    for name, size, line in funcs:
        nameoff = len(names)
        names += name.encode() + b"\0"
        pcln = pcfile = 0
        if line:
            pcln = len(pctab)
            pctab += pcvalue([(line, size // 2), (line + 2, size - size // 2)])
            pcfile = len(pctab)
            pctab += pcvalue([(0, size)])
        rows.append((nameoff, size, pcfile, pcln))
    rel = ver != "1.16"
    nf = 8 if rel else 7
    hdr_len = 8 + nf * ps
    funcname_off = hdr_len
    cu_off = funcname_off + len(names)
    filetab_off = cu_off + len(cutab)
    pctab_off = filetab_off + len(files)
    pcln_off = pctab_off + len(pctab)
    es = 8 if rel else 2 * ps
    ftab_len = (len(funcs) + 1) * es
    ptr = "<I" if ps == 4 else "<Q"
    ftab, fdata = bytearray(), bytearray()
    pc = 0
    for nameoff, size, pcfile, pcln in rows:
        funcoff = ftab_len + len(fdata)
        if rel:
            ftab += struct.pack("<II", pc, funcoff)
            fdata += struct.pack("<I", pc)
        else:
            ftab += struct.pack(ptr, TEXT + pc) + struct.pack(ptr, funcoff)
            fdata += struct.pack(ptr, TEXT + pc)
        # nameOff, args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset, startLine,
        # funcID/flag/pad/nfuncdata
        fdata += struct.pack("<IIIIIIIIi4B", nameoff, 0, 0, 0, pcfile, pcln, 0, 0, 1, 0, 0, 0, 0)
        pc += size
    ftab += struct.pack("<II", pc, 0) if rel else struct.pack(ptr, TEXT + pc) + struct.pack(ptr, 0)
    fields = [len(funcs), 2] + ([TEXT] if rel else []) + [
        funcname_off, cu_off, filetab_off, pctab_off, pcln_off]
    hdr = struct.pack("<IBBBB", MAGIC[ver], 0, 0, 1, ps) + b"".join(
        struct.pack(ptr, f) for f in fields)
    return hdr + names + cutab + files + pctab + ftab + fdata


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus/gosym"
    for ver, ps in (("1.20", 8), ("1.18", 8), ("1.16", 8), ("1.20", 4), ("1.16", 4)):
        with open(f"{out}/go{ver}-ptr{ps}", "wb") as f:
            f.write(table(ver, ps))


main()
