#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What profiling costs a managed runtime's workload, bare against under autoprof at 99 Hz: one
# script per runtime in bench/runtimes/ (java.sh: HotSpot with frame pointers and perf maps;
# python.sh: CPython with its frames named, and not; lua.sh: PUC Lua likewise), each with its
# own header. With no argument every one runs, in turn.
#   bench/runtimes.sh [java] [python] [lua]      (their variables: PAIRS, ROUNDS, PY_ROUNDS, LUA_ROUNDS, BUILD)
set -euo pipefail
cd "$(dirname "$0")"
for rt in "${@:-java python lua}"; do
	for r in $rt; do
		bash "runtimes/$r.sh"
	done
done
