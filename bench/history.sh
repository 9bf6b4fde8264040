#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The history's cost (storage.*, issue 22), beside `perf record -F 99 -a -g` in the same run:
#  1. Writing: every CPU busy (cpu_shares) plus a process started every 50 ms (distinct pids and
#     stacks) for DURATION seconds (default 180) at 99 Hz. autoprof's writer thread
#     (ap-history) CPU time as a share of one CPU after the first third of the run (which names
#     every frame once: reported apart); the directory's bytes, per day at that rate,
#     against perf.data's bytes per day.
#  2. Reading: the files of (1), copied and shifted back in time to fill a day
#     (bench/history_shift.py), served by a fresh autoprof: a 1 h cpu profile
#     (/debug/pprof/profile?start=&end=) and a 24 h timeline (/api/v1/timeline), RUNS times each
#     (default 5), medians; `perf report` over perf.data of (1) as the peer's reading time.
#   bench/history.sh [DURATION] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DURATION=${1:-180}
RUNS=${2:-5}
AP=$BUILD/autoprof
BUSY=$BUILD/targets/cpu_shares
[ -x "$AP" ] && [ -x "$BUSY" ] || { echo "build first: make all $BUSY" >&2; exit 1; }

. bench/lib/common.sh
require_profilers "$AP" perf

thread_cpu_ns() { # pid, thread name
	local t
	for t in /proc/"$1"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ]; then
			awk '{print $1}' "$t/schedstat"
		fi
	done
}

ncpu=$(nproc)
for _ in $(seq "$ncpu"); do
	"$BUSY" $((DURATION + 20)) >/dev/null &
	pids+=($!)
done
# New processes all along: their own pids and stacks, as on a host that runs things.
(while :; do ls -R /usr/share/doc >/dev/null 2>&1; sleep 0.05; done) &
pids+=($!)

port=$(free_port)
perf record -q -F 99 -a -g -o "$tmp/perf.data" >"$tmp/perf.log" 2>&1 &
perf=$!
pids+=($perf)
"$AP" --web.listen-address=127.0.0.1:$port --log.level=warn --storage.path="$tmp/h" \
	>"$tmp/ap.log" 2>&1 &
ap=$!
pids+=($ap)
until curl -sf "127.0.0.1:$port/-/ready" >/dev/null; do sleep 0.2; done
# The first minute names every frame for the first time (kallsyms, debug files: loads a query
# would pay as well): reported apart from the steady state after it.
WARM=$((DURATION / 3))
w0=$(thread_cpu_ns "$ap" ap-history)
sleep "$WARM"
ww=$(thread_cpu_ns "$ap" ap-history)
t0=$(date +%s.%N)
sleep $((DURATION - WARM))
w1=$(thread_cpu_ns "$ap" ap-history)
t1=$(date +%s.%N)
kill -INT "$perf"
wait "$perf" 2>/dev/null || true
kill "$ap"
wait "$ap" 2>/dev/null || true
hbytes=$(du -sb "$tmp/h" | awk '{print $1}')
pbytes=$(stat -c %s "$tmp/perf.data")

# A day of it, read back.
python3 bench/history_shift.py "$tmp/h" "$tmp/day" 86400 >"$tmp/shift.log"
port=$(free_port)
"$AP" --web.listen-address=127.0.0.1:$port --log.level=warn --storage.path="$tmp/day" \
	--storage.retention=25h --storage.max-bytes=64GiB >"$tmp/ap2.log" 2>&1 &
ap=$!
pids+=($ap)
until curl -sf "127.0.0.1:$port/-/ready" >/dev/null; do sleep 0.2; done
now=$(date +%s)
time_it() { # URL -> seconds of one request
	curl -s -o "$tmp/answer" -w '%{time_total}\n' "$1"
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
q1h=$(for _ in $(seq "$RUNS"); do
	time_it "127.0.0.1:$port/debug/pprof/profile?start=$((now - 3600))&end=$now"
done | median)
samples=$(go tool pprof -raw "$tmp/answer" 2>/dev/null | awk '/^Samples:/ {on = 1; next} /^Locations/ {on = 0} on && $1 ~ /^[0-9]+$/ {n += $1} END {print n + 0}')
tl24=$(for _ in $(seq "$RUNS"); do
	time_it "127.0.0.1:$port/api/v1/timeline?type=cpu&start=$((now - 86400))&end=$now"
done | median)
steps=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["times"]))' "$tmp/answer")
prep=$(for _ in $(seq "$RUNS"); do
	s=$(date +%s.%N)
	perf report -i "$tmp/perf.data" --stdio --no-children >/dev/null 2>&1
	awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN {print b - a}'
done | median)

awk -v d="$DURATION" -v w0="$w0" -v ww="$ww" -v wa="$WARM" -v w1="$w1" -v t0="$t0" -v t1="$t1" -v hb="$hbytes" \
	-v pb="$pbytes" -v q="$q1h" -v n="$samples" -v tl="$tl24" -v st="$steps" -v pr="$prep" \
	-v files="$(cat "$tmp/shift.log")" 'BEGIN {
	el = t1 - t0
	printf "history, %d s at 99 Hz on %d busy CPUs plus a process every 50 ms\n", d, '"$ncpu"'
	printf "writing: ap-history thread %.3f %% of one CPU after the first %d s (goal <= 0.05 %%);",
		(w1 - ww) / 1e9 / el * 100, wa
	printf " %.3f s in the first %d s (naming every frame once)\n", (ww - w0) / 1e9, wa
	printf "disk: autoprof %.1f MB a day, perf.data %.1f MB a day (%.2fx; goal <= 100 MB)\n",
		hb / (el + wa) * 86400 / 1e6, pb / (el + wa) * 86400 / 1e6, hb / pb
	printf "a day on disk: %s\n", files
	printf "1 h cpu profile from disk: %.3f s (%d samples; goal <= 1 s)\n", q, n
	printf "24 h timeline: %.3f s (%d steps; goal <= 0.5 s)\n", tl, st
	printf "peer: perf report of %d s of perf.data: %.3f s\n", d, pr
}'
