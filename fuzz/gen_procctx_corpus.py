#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Writes the seeds of fuzz/corpus/procctx/ (see fuzz/fuzz_procctx.c): OTEP 4719 ProcessContext
# payloads, and OTEL_CTX mappings (the 32-byte header, the payload at an offset after it).
#   python3 fuzz/gen_procctx_corpus.py fuzz/corpus/procctx
import struct
import sys

from corpus_lib import varint


def field(num, wire, body):
    if wire == 2:
        return varint(num << 3 | 2) + varint(len(body)) + body
    return varint(num << 3 | wire) + varint(body)


def kv(key, value):
    # KeyValue{key = 1, value = 2: AnyValue{string_value = 1 | int_value = 3 | bool_value = 2}}
    if isinstance(value, str):
        any_value = field(1, 2, value.encode())
    elif isinstance(value, bool):
        any_value = field(2, 0, int(value))
    else:
        any_value = field(3, 0, value)
    return field(1, 2, key.encode()) + field(2, 2, any_value)


def context(attrs, extra=()):
    # ProcessContext{resource = 1: Resource{attributes = 1}, attributes = 2}
    res = b"".join(field(1, 2, kv(k, v)) for k, v in attrs)
    return field(1, 2, res) + b"".join(field(2, 2, kv(k, v)) for k, v in extra)


def mapping(payload, published=1_000_000_000):
    return struct.pack("<8sIIQQ", b"OTEL_CTX", 2, len(payload), published, 32) + payload


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus/procctx"
    svc = context([("service.name", "checkout"), ("service.version", "1.2.3"),
                   ("deployment.environment", "prod")], [("thread.count", 8)])
    seeds = {
        "payload-service": svc,
        "payload-no-service": context([("host.name", "h1"), ("service.name", 7)]),
        "payload-twice": context([("service.name", "a"), ("service.name", "b")]),
        "mapping-service": mapping(svc),
        "mapping-unpublished": mapping(svc, 0),
        "mapping-empty": mapping(b""),
    }
    for name, data in seeds.items():
        with open(f"{out}/{name}", "wb") as f:
            f.write(data)


main()
