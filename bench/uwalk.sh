#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# User-space walks of copied stacks (unwinder__walk_copy, for the preload shim's stack copies)
# next to glibc's backtrace() on the same stack, live: $BUILD/bench/uwalk_tool (bench/uwalk_tool.c)
# walks tests/unit/stackcopy.h's chain (frames without frame pointers, glibc's qsort) WALKS
# times per round, best of 5 rounds, and prints ns per walk, frames and the ratio. The stack and
# its table rows stay in cache: this is the walk's own cost, not a cold one.
#   [BUILD=build] bench/uwalk.sh [WALKS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
WALKS=${1:-100000}
[ "$(id -u)" = 0 ] || { echo "run as root (the unwinder's BPF maps)" >&2; exit 1; }
make --no-print-directory -s BUILD="$BUILD" "$BUILD/bench/uwalk_tool"
echo "== user-space walk of a copied stack ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
"$BUILD/bench/uwalk_tool" "$WALKS"
