#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Java allocation profiling cost: the JVM's throughput on an allocation-heavy loop
# (tests/targets/java/Alloc.java: each round three byte[3104] and three Strings of 1,000
# characters, ~12.5 KB, all escaping) run bare, as an autoprof memory target (AllocTracer probed
# in libjvm.so, default 512 KiB sampling), and under JFR's own allocation sampling
# (-XX:StartFlightRecording, its default settings: ObjectAllocationSample at 150 a second), in
# one run, ROUNDS rounds of the three in turn (this VM's speed drifts within minutes). Each JVM
# warms up (the JIT compiles the loop) before it is released, so the figures are steady-state
# rounds per second; each row is the median of its runs, each ratio the median of the rounds'
# ratios to the bare run. autoprof runs throughout (its on-CPU sampling costs the bare runs too).
#   bench/javaalloc.sh [N]     (rounds of the loop per run, default 300000; ROUNDS=9)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${1:-300000}
ROUNDS=${ROUNDS:-9}
AP=$BUILD/autoprof
command -v java >/dev/null || { echo "java is missing (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
make -s "$AP" "$BUILD/javatargets/java.stamp" >/dev/null
[ -f "$BUILD/javatargets/Alloc.class" ] || { echo "Alloc.class not built (javac missing?)" >&2; exit 1; }

. bench/lib/common.sh

# The JVM on the last CPU, autoprof on the others. A fixed heap and one GC thread: what varies
# most from one JVM to the next is how G1 sizes its young generation as it goes (bare runs
# scattered by 40 %, 12 % with these).
LOOP_CPU=$(($(nproc) - 1))
AP_CPUS=0-$((LOOP_CPU > 0 ? LOOP_CPU - 1 : 0))
JVM_OPTS=(-Xlog:disable -Xms1g -Xmx1g -Xmn512m -XX:+UseParallelGC -XX:ParallelGCThreads=1
	-XX:+PreserveFramePointer)

port=$(free_port)
taskset -c "$AP_CPUS" "$AP" --web.listen-address=127.0.0.1:"$port" --web.enable-admin-api \
	>"$tmp/ap.log" 2>&1 &
ap_pid=$!
pids+=("$ap_pid")
wait_ready "$port" || { echo "autoprof did not come up: $(tail -5 "$tmp/ap.log")" >&2; exit 1; }
api=http://127.0.0.1:$port/api/v1/targets/memory

# attached ID: whether target ID's process is attached, through HotSpot's reports.
attached() {
	curl -sf "$api" | python3 -c 'import json, sys
t = [t for t in json.load(sys.stdin) if t["id"] == int(sys.argv[1])]
sys.exit(not (t and any(p["attached"] and p["mode"] == "java" for p in t[0]["processes"])))' "$1"
}

# run KIND: one JVM of the loop (bare, autoprof, jfr); prints its rounds per second.
run() {
	local extra=() id="" _
	[ "$1" = jfr ] && extra=(-XX:StartFlightRecording=filename="$tmp/rec.jfr")
	# Logging off, and JFR's echo of its options taken out: the pid and the result are
	# read from stdout.
	gated_start sh -c 'exec "$@" | grep --line-buffered -v "^filename="' sh \
		taskset -c "$LOOP_CPU" java "${JVM_OPTS[@]}" "${extra[@]}" \
		-cp "$BUILD/javatargets" Alloc bench "$N"
	if [ "$1" = autoprof ]; then
		id=$(curl -sf -X POST -H "Content-Type: application/json" -d "{\"pid\": $loop_pid}" "$api" |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
		for _ in $(seq 100); do
			attached "$id" && break
			sleep 0.1
		done
		attached "$id" || { echo "pid $loop_pid not attached" >&2; exit 1; }
	fi
	gated_finish rounds_per_s
	[ -z "$id" ] || curl -sf -X DELETE "$api/$id" >/dev/null
}

metric() { curl -sf "http://127.0.0.1:$port/metrics" | awk -v k="$1" '$1 == k {print $2}'; }
calls0=$(metric 'autoprof_memory_calls_total{call="alloc"}')
sampled0=$(metric 'autoprof_memory_calls_total{call="alloc_sampled"}')
kinds=(bare autoprof jfr)
for r in $(seq "$ROUNDS"); do
	for k in "${kinds[@]}"; do
		v=$(run "$k")
		echo "$r $k $v" >>"$tmp/runs"
		printf 'round %d %-8s %s rounds/s\n' "$r" "$k" "$v" >&2
	done
done
calls=$(($(metric 'autoprof_memory_calls_total{call="alloc"}') - calls0))
sampled=$(($(metric 'autoprof_memory_calls_total{call="alloc_sampled"}') - sampled0))

echo "Java allocation loop, $N rounds a run (~$((N * 12525 / 1000000)) MB), median of $ROUNDS runs each:"
python3 - "$tmp/runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r, k, v = line.split()[:3]
    runs.setdefault(k, {})[int(r)] = float(v)
bare = runs["bare"]
for k in ("bare", "autoprof", "jfr"):
    med = statistics.median(runs[k].values())
    ratio = statistics.median(bare[r] / runs[k][r] for r in runs[k])
    print("  %-9s %10.0f rounds/s   time x%.3f of bare" % (k, med, ratio))
PY
echo "autoprof: $calls AllocTracer reports seen, $sampled sampled (stacks walked)"
