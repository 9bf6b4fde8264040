#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Memory profiling cost: one allocation-heavy loop (bench/malloc_loop.c, malloc/free pairs of
# mixed sizes) run bare, under bpftrace-style counting probes (entries of malloc and free and a
# uretprobe on malloc), under bpftrace capturing a user stack on every malloc, under autoprof's
# attach mode (default 512 KiB sampling), and in preload mode (LD_PRELOAD=libautoprof_preload.so,
# alone and profiled by autoprof; and the shim linked into the loop, libautoprof_preload.a,
# profiled), all in one run, with a pass-through interposer
# (bench/passthrough.c: what any LD_PRELOAD shim costs before it does anything). Probes are on
# the loop's process only (bpftrace -p, autoprof's pid target). Prints ns per pair and the
# ratios. The cheap runs (bare, pass-through, shim alone, preload, linked) do 100x more pairs, in ROUNDS
# rounds of one run each, in turn (this VM's speed drifts by 10 % within minutes: runs of one
# kind minutes apart would measure the drift); each row is the median of its runs, the preload
# ratio the median of the rounds' ratios. Many short rounds rather than a few long ones: what
# scatters a run most is where the process's heap and stack happen to lie (ASLR; the bare loop
# reads 12.4-19.3 ns a pair from one process to the next, 12.6-13.5 with ASLR off), which a
# longer run does not average out and more runs do. autoprof runs through all rounds (its
# on-CPU sampling costs the bare runs too, about 0.1 %).
# The loop runs on the last CPU, autoprof on the others.
#   bench/memory.sh [PAIRS]     (PAIRS under probes, default 200000; ROUNDS=25)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PAIRS=${1:-200000}
ROUNDS=${ROUNDS:-25}
# Pairs of each bare, pass-through, shim-alone and preload run: ~0.3 s.
LONG=${LONG:-$((PAIRS * 100))}
# The loop on the last CPU, autoprof on the others (with one CPU, both on it).
LOOP_CPU=$(($(nproc) - 1))
AP_CPUS=0-$((LOOP_CPU > 0 ? LOOP_CPU - 1 : 0))
AP=$BUILD/autoprof
LOOP=$BUILD/bench/malloc_loop
LINKED=$BUILD/bench/malloc_loop_linked
PASS=$BUILD/bench/libpassthrough.so
make -s "$LOOP" "$LINKED" "$AP" "$BUILD/libautoprof_preload.so" "$PASS" >/dev/null
SHIM=$(realpath "$BUILD/libautoprof_preload.so")
PASS=$(realpath "$PASS")
command -v bpftrace >/dev/null || { echo "bpftrace is missing (apt-get install bpftrace)" >&2; exit 1; }
LIBC=$(ldd "$LOOP" | awk '/libc.so/ {print $3}')
LIBC=$(readlink -f "$LIBC")

. bench/lib/common.sh

# start_loop N [VAR=VALUE...]: starts the loop (LOOP_BIN, else the bare one) waiting on a fifo;
# sets loop_pid.
start_loop() { gated_start env "${@:2}" taskset -c "$LOOP_CPU" "${LOOP_BIN:-$LOOP}" "$1"; }
# finish_loop: lets the loop run, prints its ns per pair.
finish_loop() { gated_finish ns_per_pair; }
# with_bpftrace PROGRAM: the loop under bpftrace -p.
with_bpftrace() {
	start_loop "$PAIRS"
	bpftrace -p "$loop_pid" -e "$1" >"$tmp/bt" 2>&1 &
	local bt=$!
	until grep -q Attaching "$tmp/bt"; do sleep 0.05; done
	sleep 1
	finish_loop
	kill -INT "$bt" 2>/dev/null || true
	wait "$bt" 2>/dev/null || true
}

# median: the median of the numbers on stdin.
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
bare_run() { start_loop $LONG; finish_loop; }
pass_run() { start_loop $LONG LD_PRELOAD="$PASS"; finish_loop; }
shim_run() { start_loop $LONG LD_PRELOAD="$SHIM"; finish_loop; }

counting=$(with_bpftrace "uprobe:$LIBC:malloc,uprobe:$LIBC:free { @c = count(); }
	uretprobe:$LIBC:malloc { @r = count(); }")
stacks=$(with_bpftrace "uprobe:$LIBC:malloc { @[ustack] = sum(arg0); }")

port=$(free_port)
taskset -c "$AP_CPUS" "$AP" --web.listen-address=127.0.0.1:$port --web.enable-admin-api >"$tmp/ap.log" 2>&1 &
ap_pid=$!
pids+=($ap_pid)
until curl -sf "localhost:$port/metrics" | grep -q autoprof_cpus_sampled; do sleep 0.1; done
start_loop "$PAIRS"
curl -sf -H 'Content-Type: application/json' -d "{\"pid\": $loop_pid}" "localhost:$port/api/v1/targets/memory" >/dev/null
until curl -sf "localhost:$port/api/v1/targets/memory" | grep -q '"attached":true'; do
	sleep 0.05
done
attach=$(finish_loop)
sampled=$(curl -sf "localhost:$port/metrics" |
	awk '/^autoprof_memory_calls_total\{call="alloc_sampled"\}/ {print $2}')
# Preload mode: the loop's own shim samples and copies stacks into its ring; autoprof drains it
# and unwinds the copies on its own CPU, which is measured too.
# preload_run [VAR=VALUE...]: with LOOP_BIN=$LINKED, the loop that links the shim.
preload_run() {
	start_loop $LONG "$@"
	curl -sf -H 'Content-Type: application/json' -d "{\"pid\": $loop_pid}" "localhost:$port/api/v1/targets/memory" >/dev/null
	until curl -sf "localhost:$port/api/v1/targets/memory" |
		grep -q "\"pid\":$loop_pid,\"attached\":true,\"mode\":\"preload\""; do
		sleep 0.05
	done
	finish_loop
}
ap_cpu=0
: >"$tmp/rounds"
for _ in $(seq "$ROUNDS"); do
	b=$(bare_run) pt=$(pass_run) sh=$(shim_run)
	c0=$(cpu_ns "$ap_pid")
	pr=$(preload_run LD_PRELOAD="$SHIM")
	ap_cpu=$((ap_cpu + $(cpu_ns "$ap_pid") - c0))
	lk=$(LOOP_BIN=$LINKED preload_run)
	echo "$b $pt $sh $pr $lk" >>"$tmp/rounds"
done
bare=$(awk '{print $1}' "$tmp/rounds" | median)
pass=$(awk '{print $2}' "$tmp/rounds" | median)
shim=$(awk '{print $3}' "$tmp/rounds" | median)
preload=$(awk '{print $4}' "$tmp/rounds" | median)
preload_ratio=$(awk '{print $4 / $1}' "$tmp/rounds" | median)
linked=$(awk '{print $5}' "$tmp/rounds" | median)
linked_ratio=$(awk '{print $5 / $1}' "$tmp/rounds" | median)
preload_total=$(awk '{s += $4} END {print s}' "$tmp/rounds")
preload_sampled=$(curl -sf "localhost:$port/metrics" |
	awk '/^autoprof_memory_calls_total\{call="alloc_sampled"\}/ {print $2}')
emulated=$(curl -sf "localhost:$port/metrics" |
	awk '/^autoprof_memory_probes_total\{placement="emulated"\}/ {print $2}')
entry=$(curl -sf "localhost:$port/metrics" |
	awk '/^autoprof_memory_probes_total\{placement="entry"\}/ {print $2}')

echo "malloc/free pairs of mixed sizes (16 B..4 KiB), $PAIRS pairs under probes ($LONG bare and preload, medians of $ROUNDS rounds), $(nproc) CPUs"
printf '%-46s %12s %10s\n' "run" "ns/pair" "vs bare"
for row in "bare:$bare" "bpftrace counting (malloc+free+uretprobe):$counting" \
	"bpftrace @[ustack] = sum(arg0) on malloc:$stacks" "autoprof attach mode (512 KiB):$attach" \
	"pass-through interposer (malloc, free):$pass" \
	"preload shim alone (512 KiB, not profiled):$shim" \
	"autoprof preload mode (512 KiB):$preload" \
	"autoprof preload mode, shim linked (512 KiB):$linked"; do
	name=${row%:*} v=${row##*:}
	printf '%-46s %12.1f %9.2fx\n' "$name" "$v" "$(echo "$v / $bare" | bc -l)"
done
printf 'autoprof / bpftrace counting: %.3f (goal <= 0.25); samples taken: %s; probes on emulated instructions: %s, at an entry: %s\n' \
	"$(echo "$attach / $counting" | bc -l)" "$sampled" "$emulated" "$entry"
printf 'autoprof preload mode / bare, median of the rounds: %.3f (goal <= 1.10); per round: %s; samples taken in preload mode (LD_PRELOAD and linked): %s\n' \
	"$preload_ratio" "$(awk '{printf "%s%.2f", (NR > 1 ? " " : ""), $4 / $1}' "$tmp/rounds")" \
	"$((${preload_sampled%.*} - ${sampled%.*}))"
printf 'autoprof preload mode with the shim linked / bare, median of the rounds: %.3f (goal <= 1.10); per round: %s\n' \
	"$linked_ratio" "$(awk '{printf "%s%.2f", (NR > 1 ? " " : ""), $5 / $1}' "$tmp/rounds")"
printf 'autoprof CPU in the %s preload runs: %.0f ms (draining rings, unwinding, storing), the loops'"'"' %.0f ms; preload records lost to a full ring: %s\n' \
	"$ROUNDS" "$(echo "$ap_cpu / 1000000" | bc -l)" "$(echo "$preload_total * $LONG / 1000000" | bc -l)" \
	"$(curl -sf "localhost:$port/metrics" |
		awk '/^autoprof_memory_dropped_total\{reason="preload_ring_full"\}/ {print $2}')"
