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


# run_time_ns and run_cnt of the oncpu_sample program held by process $1, and nothing else's.
prog_stats() {
	local id out=""
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
		out+=$(bpftool prog show id "$id" 2>/dev/null | awk '$0 ~ / name oncpu_sample / {
			for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) }
			print t + 0, c + 0 }')
	done
	[ -n "$out" ] && [ "$(wc -l <<<"$out")" = 1 ] || { echo "no single oncpu_sample program in pid $1" >&2; return 1; }
	echo "$out"
}

# metric FILE NAME: a sample's value (0 when absent).
metric() { awk -v k="$2" '$1 == k {print $2; f = 1} END {if (!f) print 0}' "$1"; }

# start_daemon [FLAGS...]: sets AP_PID, AP_PORT.
start_daemon() {
	AP_PORT=$(free_port)
	"$AP" --web.listen-address=127.0.0.1:$AP_PORT --log.level=warn "$@" >"$tmp/ap.log" 2>&1 &
	AP_PID=$!
	pids+=($AP_PID)
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$AP_PORT/metrics" >/dev/null && break; sleep 0.1; done
	kill -0 "$AP_PID" 2>/dev/null || { echo "autoprof did not start:" >&2; cat "$tmp/ap.log" >&2; exit 1; }
	sleep 2 # unwind tables of what runs now are built
}

stop_daemon() {
	kill "$AP_PID"
	wait "$AP_PID" 2>/dev/null || true
}

# snap NAME: the daemon's program stats and metrics now.
snap() {
	prog_stats "$AP_PID" >"$tmp/$1.prog"
	curl -sf "http://127.0.0.1:$AP_PORT/metrics" >"$tmp/$1.metrics"
}

# under FILE FLAG CMD...: one run of CMD (printing "wall cpu") under a fresh daemon started with
# FLAG; appends "wall cpu bpf_ns runs idle python_samples" to $tmp/FILE.
under() {
	local file=$1 flag=$2 out
	shift 2
	start_daemon "$flag"
	snap s0
	out=$("$@")
	snap s1
	stop_daemon
	read -r t0 c0 <"$tmp/s0.prog"
	read -r t1 c1 <"$tmp/s1.prog"
	local i0 i1 p0 p1
	i0=$(metric "$tmp/s0.metrics" 'autoprof_samples_idle_total{profile="cpu"}')
	i1=$(metric "$tmp/s1.metrics" 'autoprof_samples_idle_total{profile="cpu"}')
	p0=$(metric "$tmp/s0.metrics" autoprof_python_samples_total)
	p1=$(metric "$tmp/s1.metrics" autoprof_python_samples_total)
	echo "$out $((t1 - t0)) $((c1 - c0)) $((i1 - i0)) $((p1 - p0))" >>"$tmp/$file"
}

# report LABEL: medians of the bare and autoprof runs, BPF time per sample with the runtime's
# frames named and without.
report() {
	python3 - "$tmp/$1" "$1" <<'PY'
import statistics, sys
rows = lambda ext: [list(map(float, l.split())) for l in open(sys.argv[1] + ext)]
bare, on, off = rows(".bare"), rows(".on"), rows(".off")
med = lambda rs, i: statistics.median(r[i] for r in rs)
def per_sample(rs):
    busy = sum(r[3] for r in rs) - sum(r[4] for r in rs)
    return (sum(r[2] for r in rs) / busy / 1e3 if busy else 0,
            sum(r[5] for r in rs) / busy * 100 if busy else 0)
bw, bc = med(bare, 0), med(bare, 1)
slow = lambda rs, i, base: (med(rs, i) / base - 1) * 100
us_on, share = per_sample(on)
us_off, _ = per_sample(off)
# What the walk adds per sample that has Python frames: the difference spread over them.
walk = (us_on - us_off) / (share / 100) if share else 0
print(f"{sys.argv[2]:<14}{bw:>7.3f}{slow(on, 0, bw):>+8.1f}%{slow(off, 0, bw):>+8.1f}%"
      f"{bc:>7.3f}{slow(on, 1, bc):>+8.1f}%{slow(off, 1, bc):>+8.1f}%"
      f"{us_on:>8.2f}{us_off:>8.2f}{share:>7.0f}%{walk:>8.1f}")
PY
}

header() {
	printf '%-14s%7s%9s%9s%7s%9s%9s%8s%8s%8s%8s\n' "" "wall" "wall" "wall" "cpu" "cpu" "cpu" "BPF us" "BPF us" "python" "walk us"
	printf '%-14s%7s%9s%9s%7s%9s%9s%8s%8s%8s%8s\n' "workload" "bare s" "py on" "py off" "bare s" "py on" "py off" "py on" "py off" "smp" "/py smp"
}

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
