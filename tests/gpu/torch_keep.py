# SPDX-License-Identifier: GPL-2.0-only
"""PyTorch on a real GPU for tests/gpu/device_check.sh, in two modes.

heap: initializes CUDA (libcudart and libcuda mapped, no tensor yet), prints one line of JSON
with its pid and waits for a line on stdin (autoprof probes the libraries); then keep_weights
keeps 4 float32 tensors of 64 MiB and one of 4 KiB, scratch makes 3 of 32 MiB at once and drops
them (the caching allocator keeps their segments: reserved, not allocated), and it prints one
line of JSON with torch.cuda.memory_allocated(), memory_reserved() and what each function kept,
waits for another line (or EOF) and exits. With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
the segments are cuMemCreate'd pages mapped into one reserved range instead of cudaMalloc'd.

loop N REPEATS: N times torch.empty(1024, device="cuda") then del, timed REPEATS times (each
between two torch.cuda.synchronize()), after a warm-up; prints {"ns_per_iter": median, ...}.
The caching allocator serves these from its cache (no CUDA call); with
PYTORCH_NO_CUDA_MEMORY_CACHING=1 each is a cudaMalloc and a cudaFree.
    python3 torch_keep.py heap | loop N REPEATS"""
import json
import os
import statistics
import sys
import time

import torch

MIB = 1 << 20
kept = []


def nbytes(t):
    return t.numel() * t.element_size()


def keep_weights():
    for _ in range(4):
        kept.append(torch.empty(16 * MIB, dtype=torch.float32, device="cuda"))  # 64 MiB
    kept.append(torch.empty(1024, dtype=torch.float32, device="cuda"))  # 4 KiB, small pool
    return sum(nbytes(t) for t in kept)


def scratch():
    tmp = [torch.empty(8 * MIB, dtype=torch.float32, device="cuda") for _ in range(3)]  # 32 MiB
    made = sum(nbytes(t) for t in tmp)
    del tmp
    return made


def say(obj):
    print(json.dumps(obj), flush=True)


def heap():
    torch.cuda.init()
    say({"pid": os.getpid(), "torch": torch.__version__, "cuda": torch.version.cuda,
         "device": torch.cuda.get_device_name(0),
         "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")})
    sys.stdin.readline()
    kept_bytes = keep_weights()
    scratch_bytes = scratch()
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    say({"pid": os.getpid(),
         "memory_allocated": torch.cuda.memory_allocated(),
         "memory_reserved": torch.cuda.memory_reserved(),
         "segments": stats.get("segment.all.current"),
         "functions": {"keep_weights": {"kept_bytes": kept_bytes},
                       "scratch": {"made_bytes": scratch_bytes, "kept_bytes": 0}}})
    sys.stdin.readline()


def loop(n, repeats):
    x = torch.empty(1024, device="cuda")
    del x
    torch.cuda.synchronize()
    runs = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(n):
            x = torch.empty(1024, device="cuda")
            del x
        torch.cuda.synchronize()
        runs.append((time.perf_counter_ns() - t0) / n)
    say({"ns_per_iter": statistics.median(runs), "runs": [round(r, 1) for r in runs],
         "iterations": n,
         "caching": os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING", "0") != "1"})


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "heap":
        heap()
    elif len(sys.argv) == 4 and sys.argv[1] == "loop":
        loop(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit(__doc__)
