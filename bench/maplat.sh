#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cold BPF map lookups: at each cpu-clock sample (99 Hz) a BPF program times a chain of 16
# dependent random lookups in each of five layouts of the same 1 Mi rows of 16 B (one 16 MiB
# array, the same BPF_F_MMAPABLE, an array of 1024 arrays of 16 KiB, an array of 512 arrays of
# 32 KiB, a hash), in rotated order, then the same chain again at once (warm). Sampled: a
# workload touching random cache lines of a big buffer, so the caches and TLB are its own when
# the sample comes. Two runs: samples on the workload's thread, then on every CPU (whatever runs
# there). Also prints which maps the kernel vmalloc'd (the rest came from kmalloc).
#   bench/maplat.sh [SECONDS] [WORKLOAD_MIB]     (default 20 s per run, 512 MiB)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SECONDS_RUN=${1:-20}
MIB=${2:-512}
make -s "$BUILD/bench/maplat_tool" >/dev/null
"$BUILD/bench/maplat_tool" thread "$SECONDS_RUN" "$MIB"
echo
"$BUILD/bench/maplat_tool" cpus "$SECONDS_RUN" "$MIB" | sed -n '/^mode/,$p'
