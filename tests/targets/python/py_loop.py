# SPDX-License-Identifier: GPL-2.0-only
"""Pure-Python busy loops for the Python frames test: py_dispatch calls py_hot three times for
each call of py_cold, all of the same cost, and sorts with py_key as the key, so that a C
function (the sort) runs between two Python frames; for argv[1] seconds."""
import sys
import time


def py_hot(n):
    s = 0
    for i in range(n):
        s += i * i  # HOT_LOOP
    return s


def py_cold(n):
    s = 0
    for i in range(n):
        s += i * i  # COLD_LOOP
    return s


def py_key(x):
    s = 0
    for i in range(40):
        s += i  # KEY_LOOP
    return -x


def py_dispatch(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        py_hot(20000)
        py_hot(20000)
        py_hot(20000)
        py_cold(20000)
        sorted(range(500), key=py_key)


print(flush=True)
py_dispatch(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0)  # MODULE_CALL
