#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Exec churn cost: a posix_spawn loop (bench/spawn_loop.c) runs 100 distinct short-lived
# binaries (one tiny C program linked 100 times with distinct build IDs: 100 files, 100 inodes)
# round-robin as fast as it can for DURATION seconds (default 15) while one profiler watches
# the machine; the profiler's CPU per exec is its CPU time over the run divided by the execs.
# Each profiler in PROFILERS (default: "$BUILD/autoprof perf"; an autoprof binary, or "perf" for
# `perf record -a -g`) runs RUNS times (default 3), the profilers alternated within each round
# so that they see the same machine; medians are printed, and the ratio of the first two.
# autoprof runs with its default settings and is measured once its start-up tables are built;
# each profiler sees the 100 binaries run for 2 s before it is measured (known binaries).
# Each profiler's CPU with no exec at all is measured too, over IDLE seconds (default 4) just
# before the loop: "above its idle" is the loop's CPU less that rate, per exec (at ~400 exec/s
# on a slow 2-CPU VM a timer's wake-ups weigh on the plain figure).
#   bench/churn.sh [DURATION] [RUNS]
#   PROFILERS="build-before/autoprof build/autoprof" bench/churn.sh 15 3
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DURATION=${1:-15}
RUNS=${2:-3}
IDLE=${IDLE:-4}
WARM=${WARM:-6}
PROFILERS=${PROFILERS:-"$BUILD/autoprof perf"}
LOOP=$BUILD/bench/spawn_loop
make -s "$LOOP" >/dev/null
. bench/lib/common.sh
require_profilers $PROFILERS

# 100 files of one program: compiled once, linked 100 times, each with its own build ID.
echo 'int main(void) { return 0; }' >"$tmp/true.c"
cc -O2 -c "$tmp/true.c" -o "$tmp/true.o"
progs=()
for i in $(seq 100); do
	cc "$tmp/true.o" -Wl,--build-id=0x$(printf '%040x' "$i") -o "$tmp/bin$i"
	progs+=("$tmp/bin$i")
done

# One run: PROFILER started, past start-up, the loop; prints "execs seconds cpu_ns".
run_one() {
	local prof=$1 pid port
	if [ "$prof" = perf ]; then
		perf record -q -a -g -o "$tmp/perf.data" >"$tmp/perf.log" 2>&1 &
		pid=$!
		sleep 2
	else
		port=$(free_port)
		"$prof" --web.listen-address=127.0.0.1:$port --log.level=warn >"$tmp/ap.log" 2>&1 &
		pid=$!
		wait_ready "$port" || true
		wait_settled "$port" # its start-up's tables are no cost of the execs
	fi
	pids+=($pid)
	# Known binaries: each run before, and (autoprof) a history flush since, which loads the
	# symbols of the frames they were sampled in: a new file's cost, not an exec's. WARM
	# seconds (default 6): in 2 s a third of the 100 files were not sampled yet, and their
	# symbols loaded (a millisecond each) in the measured loop.
	"$LOOP" "$WARM" "${progs[@]}" >/dev/null
	[ "$prof" = perf ] || wait_flushed "$port"

	# What it costs with no exec at all, over IDLE seconds just before: the per-exec figure
	# below is its CPU over the loop less that rate over the loop's time, divided by the execs.
	local i0 i1 t0 t1
	i0=$(cpu_ns $pid)
	t0=$(date +%s%N)
	sleep "$IDLE"
	i1=$(cpu_ns $pid)
	t1=$(date +%s%N)

	local c0 c1
	thread_ns $pid >"$tmp/threads0"
	c0=$(cpu_ns $pid)
	"$LOOP" "$DURATION" "${progs[@]}" >"$tmp/loop.out"
	sleep 0.5 # what the last execs left in its queues
	c1=$(cpu_ns $pid)
	thread_ns $pid >"$tmp/threads1"
	if [ -n "${SHOW_THREADS:-}" ]; then
		# Which of its threads the CPU went to (a thread started meanwhile counts from 0).
		awk -v execs="$(awk '$1 == "execs" {print $2}' "$tmp/loop.out")" \
			'NR == FNR {t0[$1] = $3; v0[$1] = $4; next}
			 {printf "  %-16s %-8s %8.1f us/exec %6d switches\n", $2, $1,
				 ($3 - t0[$1]) / 1000 / execs, $4 - v0[$1]}' \
			"$tmp/threads0" "$tmp/threads1" >&2
	fi
	if [ "$prof" != perf ] && [ -n "${SHOW_METRICS:-}" ]; then
		curl -sf "http://127.0.0.1:$port/metrics" | grep -E "$SHOW_METRICS" >&2 || true
	fi
	kill -INT "$pid"
	wait "$pid" 2>/dev/null || true
	rm -f "$tmp/perf.data"
	echo "$(awk '$1 == "execs" {print $2}' "$tmp/loop.out")" \
		"$(awk '$1 == "seconds" {print $2}' "$tmp/loop.out")" "$((c1 - c0))" \
		"$(echo "($i1 - $i0) / ($t1 - $t0)" | bc -l)"
}

: >"$tmp/results"
for r in $(seq "$RUNS"); do
	for p in $PROFILERS; do
		read -r execs secs cpu idle < <(run_one "$p")
		printf '%-28s run %d: %7.0f exec/s  %8.1f us CPU/exec  %8.1f us above idle (%.3f %% of a CPU)\n' \
			"$p" "$r" "$(echo "$execs / $secs" | bc -l)" "$(echo "$cpu / 1000 / $execs" | bc -l)" \
			"$(echo "($cpu - $idle * $secs * 1000000000) / 1000 / $execs" | bc -l)" \
			"$(echo "$idle * 100" | bc -l)"
		echo "$p $execs $secs $cpu $idle" >>"$tmp/results"
	done
done

python3 - "$tmp/results" $PROFILERS <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
meds = []
for p in sys.argv[2:]:
    mine = [r for r in rows if r[0] == p]
    rate = statistics.median(int(r[1]) / float(r[2]) for r in mine)
    us = statistics.median(int(r[3]) / 1000 / int(r[1]) for r in mine)
    above = statistics.median((int(r[3]) - float(r[4]) * float(r[2]) * 1e9) / 1000 / int(r[1])
                              for r in mine)
    meds.append(us)
    print("median %-28s %7.0f exec/s  %8.1f us CPU/exec  %5.1f %% of a CPU per 1,000 exec/s"
          "  (%.1f us above its idle)" % (p, rate, us, us / 10, above))
if len(meds) > 1 and meds[1]:
    print("ratio %s / %s: %.1f" % (sys.argv[2], sys.argv[3], meds[0] / meds[1]))
PY
