#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Off-CPU profiling cost: a context-switch-heavy workload (tests/targets/offcpu/pingpong: two
# threads bouncing a byte over pipes, four switches per round trip) runs for DURATION seconds
# (default 10) alone, under autoprof with off-CPU on, under autoprof with off-CPU off (its on-CPU
# sampler alone), and under libbpf-tools offcputime, ROUNDS times in turn (default 3); the
# median round trips per second of each gives the workload's slowdown. Both profilers watch the
# whole machine with the same 50 us minimum block time. Also reports autoprof's BPF time per
# sched_switch and the switch rate.
# PIN_CPU=N runs both threads of the workload on CPU N: every round trip is then two context
# switches on one CPU and nothing else (no wakeup IPI, whose latency in a VM depends on the
# host and can be 10x the switch itself), so the slowdown is what the profilers add per switch.
#   [PIN_CPU=N] bench/offcpu.sh [DURATION] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DURATION=${1:-10}
PIN=()
[ -z "${PIN_CPU:-}" ] || PIN=(taskset -c "$PIN_CPU")
ROUNDS=${2:-3}
AP=$BUILD/autoprof
PP=$BUILD/targets/pingpong
OFFCPUTIME=$(command -v offcputime || command -v bpf-offcputime || echo /usr/sbin/offcputime)
[ -x "$AP" ] && [ -x "$PP" ] || { echo "build first: make all $PP" >&2; exit 1; }
[ -x "$OFFCPUTIME" ] || { echo "offcputime is missing (apt-get install libbpf-tools)" >&2; exit 1; }

. bench/lib/common.sh
bench_cleanup_hook() { sysctl -q -w kernel.bpf_stats_enabled=0 || true; }

port=$(free_port)
switches() { awk '/^ctxt/ {print $2}' /proc/stat; }

# One run of the workload: prints "round_trips_per_second switches_per_second".
workload() {
	local s0 s1 t0 t1 rate
	s0=$(switches)
	t0=$(date +%s.%N)
	rate=$("${PIN[@]}" "$PP" "$DURATION" | awk '/round_trips_per_second/ {print $2}')
	t1=$(date +%s.%N)
	s1=$(switches)
	echo "$rate $(python3 -c "print(int(($s1 - $s0) / ($t1 - $t0)))")"
}

start_autoprof() { # $1: offcpu.enabled
	"$AP" --web.listen-address=127.0.0.1:$port --log.level=warn --offcpu.enabled="$1" \
		>"$tmp/ap.log" 2>&1 &
	ap=$!
	pids+=($ap)
	wait_ready "$port" || true
	sleep 1
}

stop_pid() {
	kill -"$2" "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

prog_stats() {
	bpftool prog show name offcpu_switch |
		awk '{for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) }} END {print t + 0, c + 0}'
}

# The slowdowns are measured as production runs, without kernel.bpf_stats_enabled (it adds two
# clock reads to every BPF run, of any profiler); BPF time per switch comes from one more run
# of autoprof with stats on, after the rounds.
sysctl -q -w kernel.bpf_stats_enabled=0 || true
: >"$tmp/alone"; : >"$tmp/ap_on"; : >"$tmp/ap_off"; : >"$tmp/oct"
for r in $(seq "$ROUNDS"); do
	workload >>"$tmp/alone"

	start_autoprof true
	workload >>"$tmp/ap_on"
	curl -sf "http://127.0.0.1:$port/metrics" | grep -E '^autoprof_offcpu_spans(_filtered)?_total' \
		>"$tmp/metrics"
	stop_pid "$ap" TERM

	start_autoprof false
	workload >>"$tmp/ap_off"
	stop_pid "$ap" TERM

	# System-wide, like autoprof; -m 50: the same minimum block time. It prints at the end.
	"$OFFCPUTIME" -m 50 $((DURATION + 4)) >"$tmp/oct.out" 2>"$tmp/oct.err" &
	oct=$!
	pids+=($oct)
	sleep 2 # loaded and attached
	workload >>"$tmp/oct"
	stop_pid "$oct" INT
	echo "round $r done" >&2
done

start_autoprof true
sysctl -q -w kernel.bpf_stats_enabled=1 || true
read -r ns0 cnt0 < <(prog_stats)
workload >/dev/null
read -r ns1 cnt1 < <(prog_stats)
sysctl -q -w kernel.bpf_stats_enabled=0 || true
bpf_ns=$((ns1 - ns0))
bpf_cnt=$((cnt1 - cnt0))
stop_pid "$ap" TERM

python3 - "$tmp" "$DURATION" "$ROUNDS" "$bpf_ns" "$bpf_cnt" "$(nproc)" "${PIN_CPU:-}" <<'PY'
import statistics, sys
tmp, duration, rounds, bpf_ns, bpf_cnt, ncpu, pin = sys.argv[1:]
def load(name):
    rows = [tuple(map(float, l.split())) for l in open(f"{tmp}/{name}") if l.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows), rows
alone, sw, _ = load("alone")
where = f"both threads on CPU {pin} of {ncpu}" if pin else f"{ncpu} CPUs"
print(f"off-CPU profiling cost: pingpong {duration} s x {rounds} rounds, {where}, "
      f"{sw / 1e3:.0f}k context switches/s alone (medians)")
print(f"{'':34}{'round trips/s':>14}{'slowdown':>10}")
print(f"{'alone':34}{alone:14.0f}{'':>10}")
res = {}
for name, label in (("ap_on", "autoprof, off-CPU on (50us)"), ("ap_off", "autoprof, off-CPU off"),
                    ("oct", "offcputime -m 50 (system-wide)")):
    rate, _, rows = load(name)
    res[name] = (alone - rate) / alone * 100
    print(f"{label:34}{rate:14.0f}{res[name]:9.1f}%")
per = int(bpf_ns) / int(bpf_cnt) if int(bpf_cnt) else float("nan")
print(f"autoprof BPF time per sched_switch: {per:.0f} ns ({int(bpf_cnt)} runs)")
print(open(f"{tmp}/metrics").read().strip())
print(f"goals: slowdown < 5 % -> {'met' if res['ap_on'] < 5 else 'MISSED'}; "
      f"below offcputime's -> {'met' if res['ap_on'] < res['oct'] else 'MISSED'}")
PY
