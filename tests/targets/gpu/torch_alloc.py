# SPDX-License-Identifier: GPL-2.0-only
"""GPU memory at PyTorch's level, over the caching-allocator stand-in (c10_standin.c): tensors
handed out of 2 MiB cudaMalloc segments. make_weights keeps 3 tensors of 1 MiB, make_activations
makes 4 of 300 KiB and frees 2, all on device 0. Prints its pid, waits for a line, loads
libc10_cuda.so from the directory argv[1], prints "loaded", waits for a line (its probes are
placed meanwhile), allocates, prints one JSON line of what it did (per function, per api:
"pytorch" for the tensors, "runtime" for the segments their calls made the allocator take) and
waits for a line before it exits.
    python3 torch_alloc.py LIBDIR"""
import ctypes
import json
import os
import sys

KIB = 1024
MIB = 1024 * KIB

c10 = None
functions = {}


def counts():
    return {"alloc_objects": 0, "alloc_bytes": 0, "inuse_objects": 0, "inuse_bytes": 0}


def account(fn, api, size, objects=1):
    f = functions.setdefault(fn, {"gpu": "0", "apis": {}})
    c = f["apis"].setdefault(api, counts())
    c["alloc_objects"] += objects
    c["alloc_bytes"] += size
    c["inuse_objects"] += objects
    c["inuse_bytes"] += size


def alloc(fn, size):
    """A tensor for function fn; the segment it made the allocator take, if any."""
    p = ctypes.c_void_p()
    before = c10.c10_reserved()
    rc = c10.c10_alloc(ctypes.byref(p), size, 0)
    if rc:
        sys.exit("torch_alloc.py: c10_alloc: %d" % rc)
    account(fn, "pytorch", size)
    if c10.c10_reserved() > before:
        account(fn, "runtime", c10.c10_reserved() - before)
    return p.value


def free(fn, ptr, size):
    c10.c10_free(ctypes.c_void_p(ptr), size)
    c = functions[fn]["apis"]["pytorch"]
    c["inuse_objects"] -= 1
    c["inuse_bytes"] -= size


def make_weights():
    return [alloc("make_weights", MIB) for _ in range(3)]


def make_activations():
    acts = [alloc("make_activations", 300 * KIB) for _ in range(4)]
    for p in acts[:2]:
        free("make_activations", p, 300 * KIB)
    return acts[2:]


def load(libdir):
    lib = ctypes.CDLL(os.path.join(libdir, "libc10_cuda.so"))
    lib.c10_alloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_int]
    lib.c10_alloc.restype = ctypes.c_int
    lib.c10_free.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    lib.c10_free.restype = None
    lib.c10_reserved.restype = ctypes.c_size_t
    lib.c10_allocated.restype = ctypes.c_size_t
    return lib


print(os.getpid(), flush=True)
sys.stdin.readline()
c10 = load(sys.argv[1])
print("loaded", flush=True)
sys.stdin.readline()
kept = make_weights() + make_activations()
print(json.dumps({"pid": os.getpid(), "functions": functions,
                  "reserved": c10.c10_reserved(), "allocated": c10.c10_allocated()}),
      flush=True)
sys.stdin.readline()
