# SPDX-License-Identifier: GPL-2.0-only
"""A stand-in for the few parts of torch that tests/gpu/torch_keep.py uses, over the CUDA
stand-ins (build/gputargets/lib, loaded from FAKE_TORCH_LIB), for a dry run of
tests/gpu/device_check.sh on a machine without a GPU:
    PYTHONPATH=tests/gpu/faketorch FAKE_TORCH_LIB=$PWD/build/gputargets/lib tests/gpu/device_check.sh
No caching: every tensor is one cudaMalloc, freed when dropped, so memory_reserved() and
memory_allocated() are both the bytes live, and the expandable_segments mode is the default one."""
import ctypes
import os
import types

__version__ = "0.0-fake"
version = types.SimpleNamespace(cuda="stand-in")
float32 = 4  # a dtype is its element size here

_lib = None
_live = {}


def _rt():
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(os.path.join(os.environ["FAKE_TORCH_LIB"], "libcudart.so.12"))
        _lib.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        _lib.cudaFree.argtypes = [ctypes.c_void_p]
        rc = _lib.cudaSetDevice(0)
        if rc:
            raise RuntimeError("cudaSetDevice: %d" % rc)
    return _lib


class Tensor:
    def __init__(self, n, size):
        p = ctypes.c_void_p()
        rc = _rt().cudaMalloc(ctypes.byref(p), n * size)
        if rc:
            raise RuntimeError("cudaMalloc: %d" % rc)
        self.p, self.n, self.size = p.value, n, size
        _live[self.p] = n * size

    def numel(self):
        return self.n

    def element_size(self):
        return self.size

    def __del__(self):
        if getattr(self, "p", None):
            _live.pop(self.p, None)
            _rt().cudaFree(ctypes.c_void_p(self.p))


def empty(n, dtype=float32, device=None):
    return Tensor(n, dtype)


class cuda:
    is_available = staticmethod(lambda: True)
    init = staticmethod(_rt)
    synchronize = staticmethod(lambda: None)
    get_device_name = staticmethod(lambda i=0: "CUDA stand-in")
    device_count = staticmethod(lambda: 1)
    memory_stats = staticmethod(lambda: {"segment.all.current": len(_live)})
    memory_allocated = staticmethod(lambda: sum(_live.values()))
    memory_reserved = staticmethod(lambda: sum(_live.values()))
