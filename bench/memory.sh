#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Memory profiling cost: one allocation-heavy loop (bench/malloc_loop.c, malloc/free pairs of
# mixed sizes) run bare, under bpftrace-style counting probes (entries of malloc and free and a
# uretprobe on malloc), under bpftrace capturing a user stack on every malloc, and under
# autoprof's attach mode (default 512 KiB sampling), all in one run. Probes are on the loop's
# process only (bpftrace -p, autoprof's pid target). Prints ns per pair and the ratios.
#   bench/memory.sh [PAIRS]     (PAIRS under probes, default 200000; bare runs 100x more)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PAIRS=${1:-200000}
AP=$BUILD/autoprof
LOOP=$BUILD/bench/malloc_loop
make -s "$LOOP" "$AP" >/dev/null
command -v bpftrace >/dev/null || { echo "bpftrace is missing (apt-get install bpftrace)" >&2; exit 1; }
LIBC=$(ldd "$LOOP" | awk '/libc.so/ {print $3}')
LIBC=$(readlink -f "$LIBC")

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# start_loop N: starts the loop waiting on a fifo; sets loop_pid.
start_loop() {
	rm -f "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in"
	"$LOOP" "$1" <"$tmp/in" >"$tmp/out" &
	exec 3>"$tmp/in"
	until [ -s "$tmp/out" ]; do sleep 0.01; done
	loop_pid=$(head -1 "$tmp/out")
	pids+=("$loop_pid")
}
# finish_loop: lets the loop run, prints its ns per pair.
finish_loop() {
	echo go >&3
	exec 3>&-
	while kill -0 "$loop_pid" 2>/dev/null; do sleep 0.05; done
	awk '/^ns_per_pair/ {print $2}' "$tmp/out"
}
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

bare=$(start_loop $((PAIRS * 100)); finish_loop)
counting=$(with_bpftrace "uprobe:$LIBC:malloc,uprobe:$LIBC:free { @c = count(); }
	uretprobe:$LIBC:malloc { @r = count(); }")
stacks=$(with_bpftrace "uprobe:$LIBC:malloc { @[ustack] = sum(arg0); }")

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$AP" --web.listen-address=127.0.0.1:$port >"$tmp/ap.log" 2>&1 &
pids+=($!)
until curl -sf "localhost:$port/metrics" | grep -q autoprof_cpus_sampled; do sleep 0.1; done
start_loop "$PAIRS"
curl -sf -d "{\"pid\": $loop_pid}" "localhost:$port/api/v1/targets/memory" >/dev/null
until curl -sf "localhost:$port/api/v1/targets/memory" | grep -q '"attached":true'; do
	sleep 0.05
done
attach=$(finish_loop)
sampled=$(curl -sf "localhost:$port/metrics" |
	awk '/^autoprof_memory_calls_total\{call="alloc_sampled"\}/ {print $2}')
emulated=$(curl -sf "localhost:$port/metrics" |
	awk '/^autoprof_memory_probes_total\{placement="emulated"\}/ {print $2}')
entry=$(curl -sf "localhost:$port/metrics" |
	awk '/^autoprof_memory_probes_total\{placement="entry"\}/ {print $2}')

echo "malloc/free pairs of mixed sizes (16 B..4 KiB), $PAIRS pairs under probes, $(nproc) CPUs"
printf '%-46s %12s %10s\n' "run" "ns/pair" "vs bare"
for row in "bare:$bare" "bpftrace counting (malloc+free+uretprobe):$counting" \
	"bpftrace @[ustack] = sum(arg0) on malloc:$stacks" "autoprof attach mode (512 KiB):$attach"; do
	name=${row%:*} v=${row##*:}
	printf '%-46s %12.1f %9.0fx\n' "$name" "$v" "$(echo "$v / $bare" | bc -l)"
done
printf 'autoprof / bpftrace counting: %.3f (goal <= 0.25); samples taken: %s; probes on emulated instructions: %s, at an entry: %s\n' \
	"$(echo "$attach / $counting" | bc -l)" "$sampled" "$emulated" "$entry"
