#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cost of naming interpreted frames: each runtime's workload bare and under autoprof (99 Hz,
# default settings), side by side in one run. One function per runtime (bench_python, ...);
# RUNTIMES picks them (default: all there are).
#
# Per interpreter, ROUNDS (default 5) alternating runs: the workload alone, then the workload
# with a fresh autoprof daemon ($BUILD/autoprof on a free port, started and warmed up before the
# workload starts, stopped after it). The workload does fixed work and reports its own wall and
# CPU seconds; the slowdown is the ratio of the medians (under autoprof / bare), with the
# runtime's frames named ("py on") and not ("py off": what sampling alone costs). Each daemon's
# oncpu_sample program is read as bench/unwind.sh does (its prog ids from its own fdinfo,
# run_time_ns / run_cnt deltas over the workload with BPF_ENABLE_STATS held for the whole run):
# BPF time per non-idle sample (idle ticks, autoprof_samples_idle_total, taken out of the count
# and charged nothing: an upper bound), and the share of samples that carried Python frames
# (autoprof_python_samples_total). The machine's other processes are sampled too: they are in
# the non-idle samples, so on a busy machine BPF time per sample mixes their stacks with the
# workload's. "walk us /py smp" spreads the on - off difference over the samples that had Python
# frames: what the Python walk costs per sample it runs in.
#
# bench_python: bench/py_workload.py (py_hot three times, py_cold once, pure-Python loops) under
# Debian's python3.11 and, when pyenv has them, 3.12 and 3.13; each round runs it bare, under a
# daemon naming Python frames (--python.enabled=true, the default: "py on") and under one that
# does not (--python.enabled=false, "py off": the same samples without the Python walk, so on -
# off is what the walk costs). PYTHONS="label=path ..." overrides the list.
# Exits non-zero on errors only, not on missed goals.
#   [BUILD=build] [ROUNDS=5] [RUNTIMES="python"] [PY_ROUNDS=300] bench/runtimes/python.sh (or bench/runtimes.sh python)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-5}
AP=$BUILD/autoprof
PYENV=${PYENV_ROOT:-$HOME/.pyenv}

for c in bpftool curl python3; do
	command -v "$c" >/dev/null || { echo "$c is missing" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "run as root (BPF)" >&2; exit 1; }
make --no-print-directory -s BUILD="$BUILD" "$AP"

. bench/lib/common.sh

hold_bpf_stats

INTERP_SAMPLES=autoprof_python_samples_total
INTERP_SHORT=py
. bench/lib/interp.sh

bench_python() {
	local list=() entry label path r
	if [ -n "${PYTHONS:-}" ]; then
		read -ra list <<<"$PYTHONS"
	else
		[ -x /usr/bin/python3.11 ] && list+=("debian-3.11=/usr/bin/python3.11")
		for v in 3.12 3.13; do
			path=$(ls -d "$PYENV"/versions/$v.*/bin/python3 2>/dev/null | sort -V | tail -1 || true)
			[ -n "$path" ] && list+=("pyenv-$v=$path")
		done
	fi
	echo "== python: bench/py_workload.py ${PY_ROUNDS:-300} rounds, $ROUNDS runs each way, 99 Hz"
	header
	for entry in "${list[@]}"; do
		label=${entry%%=*}
		path=${entry#*=}
		: >"$tmp/$label.bare"
		: >"$tmp/$label.on"
		: >"$tmp/$label.off"
		for r in $(seq "$ROUNDS"); do
			"$path" bench/py_workload.py "${PY_ROUNDS:-300}" >>"$tmp/$label.bare"
			under "$label.on" --python.enabled=true "$path" bench/py_workload.py "${PY_ROUNDS:-300}"
			under "$label.off" --python.enabled=false "$path" bench/py_workload.py "${PY_ROUNDS:-300}"
		done
		report "$label"
	done
}

for rt in ${RUNTIMES:-python}; do
	"bench_$rt"
done
