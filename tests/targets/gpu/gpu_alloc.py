# SPDX-License-Identifier: GPL-2.0-only
"""GPU memory profiling of Python frames over the CUDA runtime stand-in (cudart_standin.c):
py_keep_tensors keeps 2 cudaMalloc of 2 MiB, py_scratch makes and frees 4 of 512 KiB, py_pinned
keeps a cudaMallocHost of 128 KiB, all on device 0. Prints its pid, waits for a line on stdin,
THEN loads libcudart.so.12 from the directory argv[1] (so the library, and the driver it opens,
appear after the process started), prints "loaded" and waits for a line (a probe is placed a
few ms after its library is mapped; the real CUDA takes far longer to start), chooses device 0,
allocates, prints one line of JSON like gpu_alloc.c's (keyed by these functions' names), waits
for another line (or EOF) and exits without freeing.
    python3 gpu_alloc.py LIBDIR"""
import ctypes
import json
import os
import sys

KIB = 1024
MIB = 1024 * KIB

cudart = None
kept = []
functions = {}


def counts():
    return {"alloc_objects": 0, "alloc_bytes": 0, "inuse_objects": 0, "inuse_bytes": 0}


def record(name, api, size, freed=False):
    """Counts one allocation (or, with freed, its free) for the function name."""
    f = functions.setdefault(name, {"api": api, "gpu": current_gpu(), **counts(), "apis": {}})
    for c in (f, f["apis"].setdefault(api, counts())):
        if freed:
            c["inuse_objects"] -= 1
            c["inuse_bytes"] -= size
        else:
            c["alloc_objects"] += 1
            c["alloc_bytes"] += size
            c["inuse_objects"] += 1
            c["inuse_bytes"] += size


def check(rc, what):
    if rc != 0:
        sys.exit("gpu_alloc.py: %s: %d" % (what, rc))


def current_gpu():
    dev = ctypes.c_int(-1)
    check(cudart.cudaGetDevice(ctypes.byref(dev)), "cudaGetDevice")
    return str(dev.value)


def py_keep_tensors():
    for _ in range(2):
        p = ctypes.c_void_p()
        check(cudart.cudaMalloc(ctypes.byref(p), 2 * MIB), "cudaMalloc")  # KEEP_CALL
        kept.append(p.value)
        record("py_keep_tensors", "runtime", 2 * MIB)


def py_scratch():
    for _ in range(4):
        p = ctypes.c_void_p()
        check(cudart.cudaMalloc(ctypes.byref(p), 512 * KIB), "cudaMalloc")  # SCRATCH_CALL
        record("py_scratch", "runtime", 512 * KIB)
        check(cudart.cudaFree(p), "cudaFree")
        record("py_scratch", "runtime", 512 * KIB, freed=True)


def py_pinned():
    p = ctypes.c_void_p()
    check(cudart.cudaMallocHost(ctypes.byref(p), 128 * KIB), "cudaMallocHost")  # PINNED_CALL
    kept.append(p.value)
    record("py_pinned", "host_pinned", 128 * KIB)


def load(libdir):
    lib = ctypes.CDLL(os.path.join(libdir, "libcudart.so.12"))
    vpp = ctypes.POINTER(ctypes.c_void_p)
    for name, argtypes in (("cudaMalloc", [vpp, ctypes.c_size_t]),
                           ("cudaMallocHost", [vpp, ctypes.c_size_t]),
                           ("cudaFree", [ctypes.c_void_p]),
                           ("cudaSetDevice", [ctypes.c_int]),
                           ("cudaGetDevice", [ctypes.POINTER(ctypes.c_int)])):
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = ctypes.c_int
    return lib


print(os.getpid(), flush=True)
sys.stdin.readline()
cudart = load(sys.argv[1])
print("loaded", flush=True)
sys.stdin.readline()
check(cudart.cudaSetDevice(0), "cudaSetDevice")
py_keep_tensors()
py_scratch()
py_pinned()
print(json.dumps({"pid": os.getpid(), "functions": functions}), flush=True)
sys.stdin.readline()
