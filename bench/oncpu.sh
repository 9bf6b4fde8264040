#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# On-CPU profiling cost: autoprof and `perf record -F 99 -a -g` profile the whole machine at
# 99 Hz side by side, for DURATION seconds (default 60) with every CPU kept busy. Reports each
# profiler's own CPU time as a percentage of one CPU and its peak RSS, the ratios, and the BPF
# time per sample of autoprof's program. autoprof is scraped every 15 s for a 14 s profile, as
# Grafana Alloy's pyroscope.scrape does, so the cost includes serving profiles. autoprof's
# memory is also counted as users' tools count an agent's: its peak RSS outside the BPF maps
# it mmaps (VmHWM less those pages), plus every BPF map it holds (fdinfo memlock).
#   bench/oncpu.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DURATION=${1:-60}
AP=$BUILD/autoprof
BUSY=$BUILD/targets/cpu_shares
[ -x "$AP" ] && [ -x "$BUSY" ] || { echo "build first: make all $BUSY" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is missing (apt-get install linux-perf)" >&2; exit 1; }

. bench/lib/common.sh

hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
ncpu=$(nproc)

# Every CPU busy for the whole run, plus a margin.
for _ in $(seq "$ncpu"); do
	"$BUSY" $((DURATION + 15)) >/dev/null &
	pids+=($!)
done

port=$(free_port)
sysctl -q -w kernel.bpf_stats_enabled=1 || true
# perf first: autoprof learns every process at start, perf's big binary and libraries
# included; measured from its readiness (start-up tables built) on, each pays only its steady
# state.
perf record -q -F 99 -a -g -o "$tmp/perf.data" >"$tmp/perf.log" 2>&1 &
perf=$!
pids+=($perf)
"$AP" --web.listen-address=127.0.0.1:$port --log.level=warn >"$tmp/ap.log" 2>&1 &
ap=$!
pids+=($ap)
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.1; done
sleep 2 # both past start-up

ap0=$(cpu_ns $ap)
pf0=$(cpu_ns $perf)
t0=$(date +%s.%N)
elapsed=0
scrapes=0
while [ "$elapsed" -lt "$DURATION" ]; do
	sleep 1
	elapsed=$((elapsed + 1))
	if [ $((elapsed % 15)) -eq 0 ]; then
		curl -sf -o /dev/null "http://127.0.0.1:$port/debug/pprof/profile?seconds=14"
		scrapes=$((scrapes + 1))
	fi
done
ap1=$(cpu_ns $ap)
pf1=$(cpu_ns $perf)
t1=$(date +%s.%N)
ap_hwm=$(hwm_kb $ap)
pf_hwm=$(hwm_kb $perf)
ap_all=$((ap_hwm - $(mapped_maps_kib $ap) + $(maps_kib $ap)))
samples=$(curl -sf "http://127.0.0.1:$port/metrics" | awk '/^autoprof_samples_total/ {print $2}')
read -r run_ns run_cnt < <(bpftool prog show name oncpu_sample 2>/dev/null |
	awk '{for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) }}
	     END {print t + 0, c + 0}')
kill -INT "$perf"
wait "$perf" 2>/dev/null || true
kill -TERM "$ap"
wait "$ap" 2>/dev/null || true
sysctl -q -w kernel.bpf_stats_enabled=0 || true
# perf record defers aggregation and symbolization; perf report pays it to give an answer.
report_s=$(python3 -c '
import resource, subprocess, sys
subprocess.run(["perf", "report", "-i", sys.argv[1], "--stdio", "--no-children", "-g", "none",
                "--sort", "comm,dso,sym"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f" % (r.ru_utime + r.ru_stime))' "$tmp/perf.data")

python3 - "$ap0" "$ap1" "$pf0" "$pf1" "$t0" "$t1" "$ap_hwm" "$pf_hwm" "$samples" \
	"$run_ns" "$run_cnt" "$scrapes" "$ncpu" "$(du -k "$tmp/perf.data" | cut -f1)" "$report_s" \
	"$ap_all" <<'PY'
import sys
a0, a1, p0, p1, t0, t1, ahwm, phwm, samples, run_ns, run_cnt, scrapes, ncpu, pdata, report_s, aall = sys.argv[1:]
wall = float(t1) - float(t0)
ap = (int(a1) - int(a0)) / 1e9 / wall * 100
pf = (int(p1) - int(p0)) / 1e9 / wall * 100
ahwm, phwm, aall = int(ahwm) / 1024, int(phwm) / 1024, int(aall) / 1024
per = int(run_ns) / int(run_cnt) / 1000 if int(run_cnt) else float("nan")
print(f"on-CPU profiling, {ncpu} CPUs busy, 99 Hz, {wall:.0f} s, {scrapes} scrapes of a 14 s profile")
print(f"{'':24}{'autoprof':>12}{'perf record':>14}{'ratio':>8}")
print(f"{'CPU, % of one CPU':24}{ap:12.3f}{pf:14.3f}{ap / pf if pf else float('nan'):8.3f}")
print(f"{'peak RSS, MiB':24}{ahwm:12.1f}{phwm:14.1f}{ahwm / phwm:8.3f}")
print(f"{'RSS + BPF maps, MiB':24}{aall:12.1f}{phwm:14.1f}{aall / phwm:8.3f}")
print(f"autoprof samples: {samples}; BPF time per sample: {per:.2f} us ({run_cnt} runs); "
      f"perf.data: {int(pdata) / 1024:.1f} MiB")
total = (int(p1) - int(p0)) / 1e9 + float(report_s)
print(f"perf record + one perf report of the run: {total / wall * 100:.3f} % of one CPU "
      f"(perf report alone {float(report_s):.2f} s CPU); autoprof / that: {ap / (total / wall * 100):.3f}")
print(f"goals: CPU < 0.3 % -> {'met' if ap < 0.3 else 'MISSED'}; "
      f"RSS + BPF maps < 32 MiB -> {'met' if aall < 32 else 'MISSED'}")
PY
