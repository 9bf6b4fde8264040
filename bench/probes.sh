#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Latency probe cost: one loop of calls to a small function (bench/call_loop.c) run bare, under
# libbpf-tools funclatency (uprobe + uretprobe on the function's entry, histogram in BPF) and
# under an autoprof latency probe (POST /api/v1/probes), on the same function, in one run. Two
# functions: work_push begins with an instruction the kernel emulates (push), work_test with
# one it single-steps (test; autoprof moves its probe to the jle after it, funclatency stays at
# the entry). Probes are on the loop's process only (-p, "pid"). Prints ns per call, the cost
# per probed call (minus bare) and autoprof's cost over funclatency's. Then work_args (C, with
# DWARF) under an autoprof probe without and with "capture": ["x", "it->size"]: what reading
# two values (a register; a register and one read of memory) adds to a probed call.
#   bench/probes.sh [CALLS]     (CALLS under probes, default 200000; bare runs 100x more)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CALLS=${1:-200000}
AP=$BUILD/autoprof
LOOP=$BUILD/bench/call_loop
make -s "$LOOP" "$AP" >/dev/null
FUNCLATENCY=$(command -v funclatency || echo /usr/sbin/funclatency)
[ -x "$FUNCLATENCY" ] || { echo "funclatency is missing (apt-get install libbpf-tools)" >&2; exit 1; }
LOOP_ABS=$(readlink -f "$LOOP")

. bench/lib/common.sh

# start_loop FN N: starts the loop waiting on a fifo; sets loop_pid.
start_loop() { gated_start "$LOOP" "$1" "$2"; }
# finish_loop: lets the loop run, prints its ns per call.
finish_loop() { gated_finish ns_per_call; }
# with_funclatency FN: the loop under funclatency -p on FN.
with_funclatency() {
	start_loop "$1" "$CALLS"
	# Line-buffered: it says "Tracing" once attached, to a file here.
	stdbuf -oL "$FUNCLATENCY" -p "$loop_pid" ":$1" >"$tmp/fl.$1" 2>&1 &
	local fl=$!
	local waited=0
	until grep -q "Tracing" "$tmp/fl.$1"; do
		waited=$((waited + 1))
		[ $waited -lt 600 ] || { echo "funclatency did not attach" >&2; exit 1; }
		kill -0 "$fl" 2>/dev/null || { cat "$tmp/fl.$1" >&2; exit 1; }
		sleep 0.05
	done
	finish_loop
	kill -INT "$fl" 2>/dev/null || true
	wait "$fl" 2>/dev/null || true
}

port=$(free_port)
"$AP" --web.listen-address=127.0.0.1:$port --web.enable-admin-api >"$tmp/ap.log" 2>&1 &
pids+=($!)
until curl -sf "localhost:$port/metrics" | grep -q autoprof_cpus_sampled; do sleep 0.1; done
# with_autoprof FN [EXTRA]: the loop under an autoprof probe on FN (EXTRA: more JSON members of
# the request); its placement and call count go to $tmp/placement.FN.
with_autoprof() {
	local id
	start_loop "$1" "$CALLS"
	id=$(curl -sf -H 'Content-Type: application/json' \
		-d "{\"binary\": \"$LOOP_ABS\", \"function\": \"$1\", \"pid\": $loop_pid${2:-}}" \
		"localhost:$port/api/v1/probes" | sed 's/[^0-9]//g')
	finish_loop
	sleep 1
	curl -sf "localhost:$port/api/v1/probes" | python3 -c "import json, sys
p = [p for p in json.load(sys.stdin)['probes'] if p['id'] == $id][0]
print(p['placement'], p['calls'])" >"$tmp/placement.$1"
	curl -sf -X DELETE -H 'Content-Type: application/json' "localhost:$port/api/v1/probes/$id"
}

bare_push=$(start_loop work_push $((CALLS * 100)); finish_loop)
bare_test=$(start_loop work_test $((CALLS * 100)); finish_loop)
fl_push=$(with_funclatency work_push)
ap_push=$(with_autoprof work_push)
fl_test=$(with_funclatency work_test)
ap_test=$(with_autoprof work_test)
bare_args=$(start_loop work_args $((CALLS * 100)); finish_loop)
# Alternated, twice each: a probed call's cost swings between runs on a shared VM.
ap_args=$(with_autoprof work_args)
ap_cap=$(with_autoprof work_args ', "capture": ["x", "it->size"]')
ap_args2=$(with_autoprof work_args)
ap_cap2=$(with_autoprof work_args ', "capture": ["x", "it->size"]')
ap_args=$(echo "($ap_args + $ap_args2) / 2" | bc -l)
ap_cap=$(echo "($ap_cap + $ap_cap2) / 2" | bc -l)

echo "calls to a 5-instruction function, $CALLS calls under probes, $(nproc) CPUs, $(uname -r)"
printf '%-44s %10s %14s\n' "run" "ns/call" "probe ns/call"
row() { printf '%-44s %10.1f %14.1f\n' "$1" "$2" "$(echo "$2 - $3" | bc -l)"; }
row "work_push bare" "$bare_push" "$bare_push"
row "work_push funclatency (entry: push)" "$fl_push" "$bare_push"
row "work_push autoprof ($(cut -d' ' -f1 "$tmp/placement.work_push"))" "$ap_push" "$bare_push"
row "work_test bare" "$bare_test" "$bare_test"
row "work_test funclatency (entry: test)" "$fl_test" "$bare_test"
row "work_test autoprof ($(cut -d' ' -f1 "$tmp/placement.work_test"))" "$ap_test" "$bare_test"
row "work_args bare" "$bare_args" "$bare_args"
row "work_args autoprof ($(cut -d' ' -f1 "$tmp/placement.work_args"), mean of 2)" "$ap_args" "$bare_args"
row "work_args autoprof, capture x, it->size (2)" "$ap_cap" "$bare_args"
printf 'capturing two values adds %.1f ns per probed call (%.0f %%)\n' \
	"$(echo "$ap_cap - $ap_args" | bc -l)" "$(echo "100 * ($ap_cap - $ap_args) / ($ap_args - $bare_args)" | bc -l)"
printf 'autoprof / funclatency per probed call: work_push %.2f, work_test %.2f (goal <= 1); calls counted: %s, %s of %s\n' \
	"$(echo "($ap_push - $bare_push) / ($fl_push - $bare_push)" | bc -l)" \
	"$(echo "($ap_test - $bare_test) / ($fl_test - $bare_test)" | bc -l)" \
	"$(cut -d' ' -f2 "$tmp/placement.work_push")" "$(cut -d' ' -f2 "$tmp/placement.work_test")" \
	"$CALLS"
