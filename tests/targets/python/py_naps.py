# SPDX-License-Identifier: GPL-2.0-only
"""A Python thread that blocks, for the off-CPU Python frames test: py_nap_loop calls py_nap,
which sleeps 2 ms at a time, for argv[1] seconds; nearly all its wall time is off-CPU there."""
import sys
import time


def py_nap():
    time.sleep(0.002)  # NAP_CALL


def py_nap_loop(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        py_nap()  # LOOP_CALL


print(flush=True)
py_nap_loop(float(sys.argv[1]))  # NAP_MODULE_CALL
