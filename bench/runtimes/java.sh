#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What profiling costs a managed runtime's workload: each runtime's fixed amount of work, run bare
# and under autoprof (99 Hz, defaults) in alternation, PAIRS times each (default 3). Reports the
# median throughput of each mode, the slowdown, and the BPF time per sample of the on-CPU program
# over the profiled runs (every sample of the machine in that time, not only the workload's).
# One function per runtime (bench_NAME); with no argument every one runs.
#   bench/runtimes/java.sh (or bench/runtimes.sh java)      PAIRS=3 ROUNDS=... BUILD=build
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PAIRS=${PAIRS:-3}
AP=$BUILD/autoprof
[ -x "$AP" ] || { echo "build first: make all" >&2; exit 1; }

. bench/lib/common.sh
ap=
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
bench_cleanup_hook() {
	[ -z "$ap" ] || { kill "$ap" 2>/dev/null || true; wait "$ap" 2>/dev/null || true; }
	sysctl -q -w kernel.bpf_stats_enabled="$stats_was" 2>/dev/null || true
}
sysctl -q -w kernel.bpf_stats_enabled=1 || true

port=$(free_port)

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


# One run of COMMAND: its throughput (its last line) to $tmp/$1, and WORK divided by the CPU
# seconds it used (user + system, all its threads) to $tmp/$1.cpu. On a shared machine the
# first moves with the neighbours' load; the second is what the work cost the process itself,
# the interruptions of its samples included.
run_one() {
	local out=$1 work=$2 t
	shift 2
	t=$( { TIMEFORMAT='%U %S'; time "$@" | tail -n 1 >>"$tmp/$out"; } 2>&1 )
	awk -v w="$work" -v t="$t" 'BEGIN {split(t, a, " "); print w / (a[1] + a[2])}' >>"$tmp/$out.cpu"
}

# bench_one NAME UNIT WORK WARMUP COMMAND...: COMMAND prints its pid, then its throughput in UNIT/s
# as its last line; WORK is how much it does (in UNIT). WARMUP (a shorter run)
# runs untimed under each fresh autoprof first: autoprof has then seen the runtime's files once
# (symbols, unwind tables), as on a host where it runs all along, and the timed run measures
# profiling, not autoprof's first look at a new binary.
bench_one() {
	local name=$1 unit=$2 work=$3 warmup=$4 bpf_ns=0 bpf_cnt=0 ap_ns=0 wall_ns=0 extra=""
	shift 4
	: >"$tmp/bare" && : >"$tmp/under" && : >"$tmp/bare.cpu" && : >"$tmp/under.cpu"
	for _ in $(seq "$PAIRS"); do
		run_one bare "$work" "$@"
		ap_start
		eval "$warmup" >/dev/null
		read -r t0 c0 < <(bpf_stats)
		a0=$(cpu_ns "$ap")
		w0=$(date +%s%N)
		run_one under "$work" "$@"
		read -r t1 c1 < <(bpf_stats)
		ap_ns=$((ap_ns + $(cpu_ns "$ap") - a0))
		wall_ns=$((wall_ns + $(date +%s%N) - w0))
		bpf_ns=$((bpf_ns + t1 - t0))
		bpf_cnt=$((bpf_cnt + c1 - c0))
		[ "$name" != java ] || extra=" perf-map requests ok $(ap_metric 'autoprof_jvm_perf_map_requests_total{result="ok"}') failed $(ap_metric 'autoprof_jvm_perf_map_requests_total{result="failed"}')"
		ap_stop
	done
	awk -v n="$name" -v u="$unit" -v t="$bpf_ns" -v c="$bpf_cnt" -v apn="$ap_ns" -v wn="$wall_ns" \
		-v b="$(median <"$tmp/bare")" -v a="$(median <"$tmp/under")" \
		-v bc="$(median <"$tmp/bare.cpu")" -v ac="$(median <"$tmp/under.cpu")" \
		-v bs="$(tr '\n' ' ' <"$tmp/bare")" -v as="$(tr '\n' ' ' <"$tmp/under")" \
		-v bcs="$(tr '\n' ' ' <"$tmp/bare.cpu")" -v acs="$(tr '\n' ' ' <"$tmp/under.cpu")" -v x="$extra" \
		'BEGIN {
			printf "%s: medians of %d runs      bare   autoprof  slowdown\n", n, '"$PAIRS"'
			printf "%s:   %-22s %9.2f %9.2f %8.2f %%\n", n, u "/s (wall)", b, a, (b - a) / b * 100
			printf "%s:   %-22s %9.2f %9.2f %8.2f %%\n", n, u " per CPU-s", bc, ac, (bc - ac) / bc * 100
			printf "%s:   runs (wall) bare [ %s], autoprof [ %s]\n", n, bs, as
			printf "%s:   runs (CPU) bare [ %s], autoprof [ %s]\n", n, bcs, acs
			printf "%s:   BPF %.2f us per sample (%d samples of the machine): %.3f %% of a " \
				"CPU at 99 Hz\n", n, c ? t / c / 1000 : 0, c, c ? t / c * 99 / 1e7 : 0
			printf "%s:   autoprof CPU during the profiled runs: %.2f %% of one CPU " \
				"(the whole host\x27s processes);%s\n", n, wn ? apn / wn * 100 : 0, x
		}'
}

# HotSpot: Hot (tests/targets/java) with frame pointers, ROUNDS rounds of spinHot and
# spinCold (default 1500, about 10 s on an idle CPU here); throughput in rounds per second, start-up and JIT
# warm-up included in neither (Hot times its rounds itself).
bench_java() {
	command -v java >/dev/null && [ -f "$BUILD/javatargets/Hot.class" ] ||
		{ echo "java: skipped (no JDK, or make $BUILD/javatargets/java.stamp)"; return 0; }
	local java=(java -XX:+PreserveFramePointer -cp "$BUILD/javatargets" Hot 0)

	bench_one java rounds "${ROUNDS:-1500}" "${java[*]} 50" "${java[@]}" "${ROUNDS:-1500}"
}

main() {
	local rt
	for rt in "${@:-java}"; do
		"bench_$rt"
	done
}

main "$@"
