#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Fills a history directory with a day of profiles from a few minutes of real ones: copies of
every record file of SRC, shifted back in time copy after copy until DAY seconds before now are
covered, written into DST (bench/history.sh's query figures; the format is
src/history/histfile.h's, only the times and the header CRC change).
    history_shift.py SRC DST [DAY]"""

import glob
import os
import struct
import sys
import time
import zlib

HDR = 96
SUMMARY = 52


def records(data):
    off = 0
    while off + HDR <= len(data):
        nsum, dz = struct.unpack_from("<II", data, off + 60)[0], struct.unpack_from("<I", data, off + 64)[0]
        rz = struct.unpack_from("<I", data, off + 72)[0]
        size = HDR + nsum * SUMMARY + dz + rz
        yield off, size, nsum
        off += size


def shifted(data, shift_ns):
    out = bytearray()
    for off, size, nsum in records(data):
        rec = bytearray(data[off:off + size])
        start, end = struct.unpack_from("<QQ", rec, 32)
        struct.pack_into("<QQ", rec, 32, start + shift_ns, end + shift_ns)
        crc = zlib.crc32(bytes(rec[8:HDR]) + bytes(rec[HDR:HDR + nsum * SUMMARY]))
        struct.pack_into("<I", rec, 4, crc)
        out += rec
    return bytes(out)


def span(data):
    first = last = None
    for off, _, _ in records(data):
        s, e = struct.unpack_from("<QQ", data, off + 32)
        first = s if first is None else min(first, s)
        last = e if last is None else max(last, e)
    return first, last


def main():
    src, dst = sys.argv[1], sys.argv[2]
    day = int(sys.argv[3]) if len(sys.argv) > 3 else 86400
    files = [open(f, "rb").read() for f in sorted(glob.glob(os.path.join(src, "*.aph")))]
    spans = [span(d) for d in files]
    first = min(s for s, _ in spans)
    last = max(e for _, e in spans)
    length = last - first
    now = time.time_ns()
    os.makedirs(dst, mode=0o700, exist_ok=True)
    k, n = 0, 0
    # Copy k ends where copy k - 1 began: [now - (k + 1) * length, now - k * length).
    while k * length < day * 10**9:
        shift = now - (k + 1) * length - first
        for data, (s, _) in zip(files, spans):
            name = os.path.join(dst, "%d.aph" % ((s + shift) // 10**9))
            with open(name, "wb") as f:
                f.write(shifted(data, shift))
            n += 1
        k += 1
    print("%d files: %d copies of %.0f s" % (n, k, length / 1e9))


if __name__ == "__main__":
    main()
