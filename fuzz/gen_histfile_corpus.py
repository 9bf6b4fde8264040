#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seeds for fuzz/fuzz_histfile.c, written as src/history/histfile.c writes them: a file of two
records (cpu, then offcpu reusing and growing the dictionary), one with a deep recursive stack,
and the first file cut inside its second record.
    fuzz/gen_histfile_corpus.py fuzz/corpus/histfile"""

import os
import struct
import sys
import zlib

from corpus_lib import varint


def record(typ, start, end, nvalues, summary, strings, locs, nodes, rows):
    d = varint(len(strings)) + b"".join(varint(len(s)) + s for s in strings)
    d += varint(len(locs)) + b"".join(b"".join(map(varint, l)) for l in locs)
    d += varint(len(nodes)) + b"".join(b"".join(map(varint, n)) for n in nodes)
    r = varint(len(rows)) + b"".join(b"".join(map(varint, row)) for row in rows)
    dz, rz = zlib.compress(d, 6), zlib.compress(r, 6)
    summ = b"".join(struct.pack("<I16s4Q", pid, exe, *vals) for pid, exe, vals in summary)
    hdr = bytearray(96)
    struct.pack_into("<I", hdr, 0, 0x31485041)
    struct.pack_into("<16sQQQ", hdr, 16, typ, start, end, 10101010)
    struct.pack_into("<IIIIII", hdr, 56, nvalues, len(summary), len(dz), len(d), len(rz), len(r))
    struct.pack_into("<I", hdr, 8, zlib.crc32(dz + rz))
    struct.pack_into("<I", hdr, 4, zlib.crc32(bytes(hdr[8:]) + summ))
    return bytes(hdr) + summ + dz + rz


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t = 1795662720 * 10**9
    # Strings 1..: id 0 is "" in every file.
    strs = [b"/bin/spike", b"main", b"spike.c", b"spike_fn", b"spike", b"[kernel.kallsyms]",
            b"schedule"]
    locs = [(1, 2, 3, 12), (1, 4, 3, 30), (6, 7, 0, 0)]
    nodes = [(0, 0), (1, 1)]  # main, then spike_fn under it
    rows = [(2, 7, 7, 5, 5, 1, 0, 0, 0, 0, 99, 990000000), (1, 7, 8, 5, 5, 1, 0, 0, 0, 0, 1, 10)]
    first = record(b"cpu", t, t + 10**10, 2, [(7, b"spike", (100, 1000000000, 0, 0))], strs,
                   locs, nodes, rows)
    second = record(b"offcpu", t, t + 10**10, 2, [(7, b"spike", (3, 3000, 0, 0))], [], [],
                    [(2, 2)], [(3, 7, 7, 5, 5, 1, 0, 0, 0, 0, 3, 3000)])
    with open(os.path.join(out, "two_records"), "wb") as f:
        f.write(first + second)
    with open(os.path.join(out, "cut"), "wb") as f:
        f.write(first + second[:len(second) // 2])
    deep = [(0, 0)] + [(i, 1) for i in range(1, 200)]
    with open(os.path.join(out, "deep_stack"), "wb") as f:
        f.write(record(b"cpu", t, t + 10**9, 2, [], strs, locs, deep,
                       [(200, 9, 9, 5, 5, 0, 0, 0, 1, 2, 1, 10)]))


if __name__ == "__main__":
    main()
