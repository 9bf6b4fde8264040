# SPDX-License-Identifier: GPL-2.0-only
"""Memory profiling of Python frames: every 10 ms py_mem_loop calls py_leak, which keeps a
64 KiB bytearray, and py_churn, which makes and drops 50 of 4 KiB (both above pymalloc's 512
bytes: their buffers come from malloc). Prints its pid, waits for a line on stdin (the profiler
attached), runs argv[1] seconds, prints "leaked N" (the bytes kept), then sleeps until killed."""
import os
import sys
import time

kept = []


def py_leak():
    kept.append(bytearray(65536))  # LEAK_CALL


def py_churn():
    for _ in range(50):
        b = bytearray(4096)  # CHURN_CALL
        del b


def py_mem_loop(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        py_leak()
        py_churn()
        time.sleep(0.01)


print(os.getpid(), flush=True)
sys.stdin.readline()
py_mem_loop(float(sys.argv[1]))  # MEM_MODULE_CALL
print("leaked %d" % (65536 * len(kept)), flush=True)
time.sleep(600)
