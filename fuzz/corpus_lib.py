# SPDX-License-Identifier: GPL-2.0-only
"""What the seed generators (fuzz/gen_*_corpus.py) share: the LEB128 varint that protobuf,
Go's pclntab and autoprof's history files all write."""


def varint(v):
    """v (>= 0) as an unsigned LEB128 varint."""
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)
