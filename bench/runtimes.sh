#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What profiling costs a managed runtime's workload: each runtime's fixed amount of work, run bare
# and under autoprof (99 Hz, defaults) in alternation, PAIRS times each (default 3). Reports the
# median throughput of each mode, the slowdown, and the BPF time per sample of the on-CPU program
# over the profiled runs (every sample of the machine in that time, not only the workload's).
# One function per runtime (bench_NAME); with no argument every one runs.
#   bench/runtimes.sh [RUNTIME...]      PAIRS=3 ROUNDS=... BUILD=build
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PAIRS=${PAIRS:-3}
AP=$BUILD/autoprof
[ -x "$AP" ] || { echo "build first: make all" >&2; exit 1; }

tmp=$(mktemp -d)
ap=
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
cleanup() {
	[ -z "$ap" ] || { kill "$ap" 2>/dev/null || true; wait "$ap" 2>/dev/null || true; }
	sysctl -q -w kernel.bpf_stats_enabled="$stats_was" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
sysctl -q -w kernel.bpf_stats_enabled=1 || true

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

ap_start() {
	"$AP" --web.listen-address=127.0.0.1:$port --log.level=warn >>"$tmp/ap.log" 2>&1 &
	ap=$!
	for _ in $(seq 200); do
		curl -sf "http://127.0.0.1:$port/metrics" | grep -q autoprof_cpus_sampled && break
		sleep 0.1
	done
	sleep 1 # past start-up (the tables of the host's processes)
}

ap_stop() {
	kill -TERM "$ap"
	wait "$ap" 2>/dev/null || true
	ap=
}

ap_metric() { curl -sf "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# run_time_ns and run_cnt of the loaded on-CPU program (0 0 when none is loaded).
bpf_stats() {
	bpftool prog show name oncpu_sample 2>/dev/null |
		awk '{for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) }}
		     END {print t + 0, c + 0}'
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# bench_one NAME UNIT COMMAND...: COMMAND prints its pid, then its throughput as its last line.
bench_one() {
	local name=$1 unit=$2 bare under bpf_ns=0 bpf_cnt=0 extra=""
	shift 2
	: >"$tmp/bare" && : >"$tmp/under"
	for _ in $(seq "$PAIRS"); do
		"$@" | tail -n 1 >>"$tmp/bare"
		ap_start
		read -r t0 c0 < <(bpf_stats)
		"$@" | tail -n 1 >>"$tmp/under"
		read -r t1 c1 < <(bpf_stats)
		bpf_ns=$((bpf_ns + t1 - t0))
		bpf_cnt=$((bpf_cnt + c1 - c0))
		[ "$name" != java ] || extra=" perf-map requests ok $(ap_metric 'autoprof_jvm_perf_map_requests_total{result="ok"}') failed $(ap_metric 'autoprof_jvm_perf_map_requests_total{result="failed"}') cut $(ap_metric autoprof_jvm_stacks_cut_total) samples $(ap_metric autoprof_samples_total)"
		ap_stop
	done
	bare=$(median <"$tmp/bare")
	under=$(median <"$tmp/under")
	awk -v n="$name" -v u="$unit" -v b="$bare" -v a="$under" -v t="$bpf_ns" -v c="$bpf_cnt" \
		-v bs="$(tr '\n' ' ' <"$tmp/bare")" -v as="$(tr '\n' ' ' <"$tmp/under")" -v x="$extra" \
		'BEGIN {
			printf "%s: bare %.3f %s, under autoprof %.3f %s: slowdown %.2f %%\n",
				n, b, u, a, u, (b - a) / b * 100
			printf "%s:   runs bare [ %s], under [ %s]\n", n, bs, as
			printf "%s:   BPF %.2f us per sample (%d samples of the machine)%s\n",
				n, c ? t / c / 1000 : 0, c, x
		}'
}

# HotSpot: Hot (tests/integration/javatargets) with frame pointers, ROUNDS rounds of spinHot and
# spinCold (default 1500, about 10 s on an idle CPU here); throughput in rounds per second, start-up and JIT
# warm-up included in neither (Hot times its rounds itself).
bench_java() {
	command -v java >/dev/null && [ -f "$BUILD/javatargets/Hot.class" ] ||
		{ echo "java: skipped (no JDK, or make $BUILD/javatargets/java.stamp)"; return 0; }
	bench_one java rounds/s java -XX:+PreserveFramePointer -cp "$BUILD/javatargets" Hot 0 \
		"${ROUNDS:-1500}"
}

main() {
	local rt
	for rt in "${@:-java}"; do
		"bench_$rt"
	done
}

main "$@"
