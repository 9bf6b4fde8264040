# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by the bench scripts (from the repository root): a scratch directory $tmp, removed at
# exit with every process in pids[] killed (KEEP=DIR keeps the files there instead), and the
# helpers each script had written again. A script that must undo more at exit defines
# bench_cleanup_hook.

if [ -n "${KEEP:-}" ]; then
	tmp=$KEEP
	mkdir -p "$tmp"
else
	tmp=$(mktemp -d)
fi
pids=()
bench_cleanup_hook() { :; }
bench_cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	bench_cleanup_hook
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap bench_cleanup EXIT

# Each profiler named is perf (installed) or an autoprof binary (built); exits otherwise.
require_profilers() {
	local p
	for p in "$@"; do
		if [ "$p" = perf ]; then
			command -v perf >/dev/null || { echo "perf is missing (apt-get install linux-perf)" >&2; exit 1; }
		else
			[ -x "$p" ] || { echo "$p: build first (make all)" >&2; exit 1; }
		fi
	done
}

# A TCP port free on loopback now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# CPU nanoseconds of every thread of a process (schedstat: tick-accurate stat is too coarse).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
# One line per thread of pid: tid, name, CPU ns, voluntary context switches.
thread_ns() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(tr -d ' ' <"$t/comm") $(cut -d' ' -f1 "$t/schedstat")" \
			"$(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status")"
	done 2>/dev/null
}

# BPF run-time stats on while a holder process lives (BPF_ENABLE_STATS, BPF_STATS_RUN_TIME),
# without touching kernel.bpf_stats_enabled; the holder is in pids[], so it ends at exit.
hold_bpf_stats() {
	python3 - >"$tmp/stats.out" 2>&1 <<'PY' &
import ctypes, signal
libc = ctypes.CDLL(None, use_errno=True)
attr = (ctypes.c_uint8 * 128)()  # enable_stats.type = BPF_STATS_RUN_TIME = 0
fd = libc.syscall(321, 32, ctypes.byref(attr), ctypes.c_uint(4))  # bpf(BPF_ENABLE_STATS)
print("ok" if fd >= 0 else "errno %d" % ctypes.get_errno(), flush=True)
if fd >= 0:
    signal.sigwait([signal.SIGTERM, signal.SIGINT])
PY
	pids+=($!)
	for _ in $(seq 50); do [ -s "$tmp/stats.out" ] && break; sleep 0.1; done
	grep -q '^ok' "$tmp/stats.out" ||
		{ echo "BPF_ENABLE_STATS failed: $(cat "$tmp/stats.out")" >&2; exit 1; }
}

# A workload that prints its pid, waits for a line on stdin and then prints "KEY VALUE" lines
# (bench/malloc_loop.c, bench/call_loop.c): started with gated_start CMD... (the fifo on its
# stdin; sets loop_pid), released by gated_finish KEY, which waits for it and prints VALUE.
gated_start() {
	rm -f "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in"
	"$@" <"$tmp/in" >"$tmp/out" &
	exec 3>"$tmp/in"
	until [ -s "$tmp/out" ]; do sleep 0.01; done
	loop_pid=$(head -1 "$tmp/out")
	pids+=("$loop_pid")
}
gated_finish() {
	echo go >&3
	exec 3>&-
	while kill -0 "$loop_pid" 2>/dev/null; do sleep 0.05; done
	awk -v key="$1" '$1 == key {print $2}' "$tmp/out"
}

# Memory as users' tools count an agent's: the BPF maps it holds, and its resident pages
# outside them (scale.sh, oncpu.sh).
# KiB of BPF maps a process holds, each map once.
maps_kib() {
	local pid=$1 fd
	for fd in /proc/"$pid"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-map" ] || continue
		awk '/^map_id/ {id = $2} /^memlock/ {m = $2} END {print id, m}' \
			/proc/"$pid"/fdinfo/"${fd##*/}" 2>/dev/null
	done | sort -u | awk '{s += $2} END {printf "%d\n", s / 1024}'
}
# KiB resident outside the BPF maps it mmaps (those are counted with the maps, once).
rss_kib() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / {m = ($6 == "anon_inode:bpf-map")}
	     /^Rss:/ {if (m) mapped += $2; else rss += $2} END {print rss}' /proc/"$1"/smaps
}
# KiB of the BPF maps' pages a process has mapped and resident (in its RSS and its VmHWM).
mapped_maps_kib() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / {m = ($6 == "anon_inode:bpf-map")}
	     /^Rss:/ {if (m) mapped += $2} END {print mapped + 0}' /proc/"$1"/smaps
}

# Waits (up to 30 s) until the autoprof on PORT has its samplers loaded: /metrics answers
# before them, and autoprof_cpus_sampled appears once their samples are ingested.
wait_ready() {
	local _
	for _ in $(seq 300); do
		curl -sf "http://127.0.0.1:$1/metrics" | grep -q '^autoprof_cpus_sampled' && return 0
		sleep 0.1
	done
	return 1
}

# Waits until the autoprof on PORT is past start-up: its builder thread makes the unwind tables
# of every file the running processes map (seconds of CPU on a busy host), and with the history
# on its first flush (storage.flush-interval, 10 s) loads the symbol tables the names on disk
# need (kallsyms, DWARF: 0.4 s of CPU here), work a benchmark should not time. Returns once no
# table was built for 2 s and the history wrote once, if it is on (30 s at most).
wait_settled() {
	local _ m builds flushed last=-1 still=0
	for _ in $(seq 60); do
		m=$(curl -sf "http://127.0.0.1:$1/metrics")
		builds=$(awk '/^autoprof_unwind_table_builds_total/ {s += $2} END {print s + 0}' <<<"$m")
		flushed=$(awk '/^autoprof_history_enabled / {on = $2}
			/^autoprof_history_records_written_total / {n = $2}
			END {print (on + 0 == 0 || n + 0 > 0) ? 1 : 0}' <<<"$m")
		if [ "$builds" = "$last" ] && [ "$flushed" = 1 ]; then
			still=$((still + 1))
			[ $still -ge 4 ] && return 0
		else
			still=0
		fi
		last=$builds
		sleep 0.5
	done
}

# Waits (up to 15 s) for the next history flush of the autoprof on PORT; at once without one.
wait_flushed() {
	local _ n0 n
	n0=$(curl -sf "http://127.0.0.1:$1/metrics" |
		awk '/^autoprof_history_enabled / {on = $2} /^autoprof_history_records_written_total / {n = $2}
		END {print (on + 0 == 0) ? -1 : n + 0}')
	[ "$n0" = -1 ] && return 0
	for _ in $(seq 150); do
		n=$(curl -sf "http://127.0.0.1:$1/metrics" |
			awk '/^autoprof_history_records_written_total / {print $2 + 0}')
		[ "${n:-0}" != "$n0" ] && return 0
		sleep 0.1
	done
}

# run_time_ns and run_cnt of the oncpu_sample program held by process $1, and nothing else's.
oncpu_prog_stats() {
	local id out=""
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
		out+=$(bpftool prog show id "$id" 2>/dev/null | awk '$0 ~ / name oncpu_sample / {
			for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) }
			print t + 0, c + 0 }')
	done
	[ -n "$out" ] && [ "$(wc -l <<<"$out")" = 1 ] || { echo "no single oncpu_sample program in pid $1" >&2; return 1; }
	echo "$out"
}
