#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where preload mode's cost goes, without autoprof: bench/malloc_loop bare, under the
pass-through interposer, under the shim with sampling off and at 512 KiB, and the loop that
links the shim, sampling off and at 512 KiB. One process per run, kinds interleaved, ROUNDS
runs of each (what scatters a run most is where its heap and stack lie, so many short runs);
prints each kind's median and min ns per pair and its ratio to bare.
    python3 bench/memory_parts.py [PAIRS] [ROUNDS]    (20000000, 25; BUILD=build)"""
import os
import statistics
import subprocess
import sys

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BUILD = os.environ.get("BUILD", "build")
PAIRS = sys.argv[1] if len(sys.argv) > 1 else "20000000"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 25
LOOP = os.path.join(BUILD, "bench", "malloc_loop")
LINKED = os.path.join(BUILD, "bench", "malloc_loop_linked")
SHIM = os.path.abspath(os.path.join(BUILD, "libautoprof_preload.so"))
PASS = os.path.abspath(os.path.join(BUILD, "bench", "libpassthrough.so"))
OFF = {"AUTOPROF_MEMORY_SAMPLE_INTERVAL": str(10 ** 14)}
CPU = str(os.cpu_count() - 1)

KINDS = [
    ("bare", LOOP, {}),
    ("pass-through interposer", LOOP, {"LD_PRELOAD": PASS}),
    ("shim, sampling off", LOOP, dict(OFF, LD_PRELOAD=SHIM)),
    ("shim, 512 KiB", LOOP, {"LD_PRELOAD": SHIM}),
    ("shim linked, sampling off", LINKED, OFF),
    ("shim linked, 512 KiB", LINKED, {}),
]


def run(exe, env):
    out = subprocess.run(["taskset", "-c", CPU, exe, PAIRS], input="\n", capture_output=True,
                         text=True, env=dict(os.environ, **env), check=True).stdout
    return float(next(line for line in out.splitlines()
                      if line.startswith("ns_per_pair")).split()[1])


subprocess.run(["make", "-s", LOOP, LINKED, SHIM, PASS], check=True)
times = {name: [] for name, _, _ in KINDS}
for _ in range(ROUNDS):
    for name, exe, env in KINDS:
        times[name].append(run(exe, env))
bare = statistics.median(times["bare"])
print("malloc/free pairs of mixed sizes, %s pairs a run, %d runs of each, not profiled" %
      (PAIRS, ROUNDS))
print("%-28s %8s %8s %8s" % ("kind", "median", "min", "vs bare"))
for name, _, _ in KINDS:
    m = statistics.median(times[name])
    print("%-28s %8.2f %8.2f %7.3fx" % (name, m, min(times[name]), m / bare))
