# SPDX-License-Identifier: GPL-2.0-only
"""Fixed work for bench/runtimes.sh: ROUNDS rounds of py_dispatch (py_hot three times, py_cold
once, pure-Python loops), then one line: wall seconds, CPU seconds of this process."""
import sys
import time


def py_hot(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def py_cold(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def py_dispatch(rounds):
    for _ in range(rounds):
        py_hot(20000)
        py_hot(20000)
        py_hot(20000)
        py_cold(20000)


w0, c0 = time.monotonic(), time.process_time()
py_dispatch(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
print("%.4f %.4f" % (time.monotonic() - w0, time.process_time() - c0), flush=True)
