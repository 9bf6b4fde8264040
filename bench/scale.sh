#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cost as the host gets busy: the agent's CPU (all threads, schedstat) and memory (resident
# pages outside the BPF maps it mmaps, plus the BPF maps it holds: the memlock of every map fd
# in /proc/PID/fdinfo, each map once) in
# phases of PHASE seconds (default 10), beside `perf record -a -g` in the same run:
#   idle           nothing but the machine's own processes
#   exec100        100 exec/s of 100 distinct short-lived binaries (bench/spawn_loop.c, paced)
#   exec1000       1,000 exec/s of the same
#   new100         100 exec/s of binaries never seen before: each exec a file of its own (the
#                  same program with another build ID), 100 x PHASE of them
#   busy10/100/500 that many processes of distinct binaries, each spinning 1 ms then sleeping
#                  N ms (about one CPU in all, however many)
#   serve          busy100 for PHASE seconds, then three scrapes of
#                  /debug/pprof/profile?seconds=SERVE_WINDOW (default 300; perf: perf report
#                  of its data so far): memory is the peak while they run (VmHWM less the BPF
#                  maps' mapped pages, plus the maps), CPU the phase's
# PHASES picks phases (default all but serve, which wants PHASE >= SERVE_WINDOW to mean it).
# AUTOPROF_ARGS: more flags for autoprof (e.g. --storage.path= to keep no history on disk).
# STACKS=1: after each exec phase, how whole autoprof's stacks of that phase were (stacks(),
# below); the scrape loads symbol tables, which the later phases' memory then includes.
# One profiler at a time over every phase, PROFILERS (default "$BUILD/autoprof perf") in turn;
# the ratio is the first profiler's figure over the second's. perf's memory is its RSS (its
# rings are mapped into it).
#   bench/scale.sh [PHASE]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PHASE=${1:-10}
PROFILERS=${PROFILERS:-"$BUILD/autoprof perf"}
LOOP=$BUILD/bench/spawn_loop
make -s "$LOOP" >/dev/null
. bench/lib/common.sh
require_profilers $PROFILERS

# 500 files of one program each way, linked with distinct build IDs: 500 inodes.
echo 'int main(void) { return 0; }' >"$tmp/true.c"
cat >"$tmp/busy.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
__attribute__((noinline)) static void spin(double s)
{
	double end = now() + s;
	while (now() < end)
		;
}
int main(int argc, char **argv)
{
	struct timespec nap = { 0, atol(argv[1]) * 1000000L };
	for (;;) {
		spin(0.001);
		nanosleep(&nap, NULL);
	}
}
EOF
cc -O2 -c "$tmp/true.c" -o "$tmp/true.o"
cc -O2 -c "$tmp/busy.c" -o "$tmp/busy.o"
progs=()
for i in $(seq 500); do
	id=$(printf '%040x' "$i")
	[ "$i" -le 100 ] && cc "$tmp/true.o" -Wl,--build-id=0x$id -o "$tmp/true$i" && progs+=("$tmp/true$i")
	cc "$tmp/busy.o" -Wl,--build-id=0x$id -o "$tmp/busy$i"
done
# Never-seen binaries, made per profiler (each sees its own): true1 with its build ID's bytes
# replaced, a file and an ID of its own for every exec of the phase.
make_new() {
	rm -rf "$tmp/new"
	mkdir -p "$tmp/new"
	python3 - "$tmp/true1" "$tmp/new" "$((100 * PHASE + 200))" <<'PY'
import sys, os, struct
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, "rb").read()
# The build-ID note: namesz 4, descsz 20, NT_GNU_BUILD_ID, "GNU", then the ID.
note = struct.pack("<III", 4, 20, 3) + b"GNU\0"
old = note + bytes.fromhex("%040x" % 1)
assert data.count(old) == 1, "build ID not found once"
for i in range(n):
    p = os.path.join(out, "new%d" % i)
    with open(p, "wb") as f:
        f.write(data.replace(old, note + bytes.fromhex("ee%038x" % i)))
    os.chmod(p, 0o755)
PY
	newprogs=()
	for i in $(seq 0 $((100 * PHASE + 199))); do newprogs+=("$tmp/new/new$i"); done
}

busy_start() {
	local n=$1 i
	busy=()
	for i in $(seq "$n"); do
		"$tmp/busy$i" "$n" &
		busy+=($!)
	done
}
busy_stop() {
	kill "${busy[@]}" 2>/dev/null || true
	wait "${busy[@]}" 2>/dev/null || true
	busy=()
}

# Scrapes of a SERVE_WINDOW-second profile, as a user's tool makes them.
serve_scrapes() {
	local prof=$1 i
	for i in 1 2 3; do
		if [ "$prof" = perf ]; then
			perf report -q -i "$tmp/perf.data" --stdio -g none >/dev/null 2>&1 || true
		else
			curl -sf -o "$tmp/serve.pb.gz" \
				"http://127.0.0.1:$port/debug/pprof/profile?seconds=${SERVE_WINDOW:-300}"
		fi
	done
}

# How whole the phase's stacks are, every process's (the churn's own included): complete (from
# _start, the loader's entry, or a thread's clone; or no user stack at all, [exec] in execve
# past the old image and [exiting] past the release of its memory), marked [truncated], complete-looking but unnamed (a process gone
# before its maps were read: its addresses stay raw), kernel threads, anything else.
stacks() {
	curl -sf "http://127.0.0.1:$port/debug/pprof/profile?seconds=$PHASE&format=folded" |
		python3 -c '
import re, sys
c = dict.fromkeys(("complete", "truncated", "unnamed", "kernel", "other"), 0)
for line in sys.stdin:
    stack, n = line.rsplit(" ", 1)
    fr = stack.split(";")
    if "[truncated]" in fr:
        k = "truncated"
    elif fr[0] == "[kernel]":
        k = "kernel"
    elif len(fr) > 1 and fr[1] in ("_start", "_dl_start_user", "clone3", "__clone3", "clone",
                                   "__clone", "[exec]", "[exiting]"):
        k = "complete"
    elif len(fr) > 1 and re.match(r"0x[0-9a-f]+$", fr[1]):
        k = "unnamed"
    else:
        k = "other"
    c[k] += int(n)
t = sum(c.values()) or 1
print("%-22s %-9s stacks: %d samples, " % (sys.argv[1], sys.argv[2], t) +
      ", ".join("%s %.1f %%" % (k, 100.0 * v / t) for k, v in c.items()))
' "$prof" "$1"
}

# One phase against a running profiler: prints "phase cpu% rss_kib maps_kib".
phase() {
	local name=$1 pid=$2 prof=$3 c0 c1 t0 t1 rss
	case $name in
	busy*) busy_start "${name#busy}"; sleep 2 ;;
	serve) busy_start 100 ;;
	new*) make_new ;;
	esac
	c0=$(cpu_ns "$pid")
	t0=$(date +%s%N)
	case $name in
	idle | busy*) sleep "$PHASE" ;;
	exec*) SPAWN_RATE=${name#exec} "$LOOP" "$PHASE" "${progs[@]}" >"$tmp/loop.out" ;;
	new*) SPAWN_RATE=${name#new} "$LOOP" "$PHASE" "${newprogs[@]}" >"$tmp/loop.out" ;;
	serve)
		sleep "$PHASE"
		# The high-water mark from here: what the scrapes add to what the run holds.
		echo "$(rss_kib "$pid")" >"$tmp/serve.before"
		echo 5 >/proc/"$pid"/clear_refs
		serve_scrapes "$prof"
		;;
	esac
	c1=$(cpu_ns "$pid")
	t1=$(date +%s%N)
	rss=$(rss_kib "$pid")
	[ "$name" = serve ] &&
		rss=$(($(awk '/^VmHWM:/ {print $2}' /proc/"$pid"/status) - $(mapped_maps_kib "$pid")))
	echo "$name $(echo "($c1 - $c0) * 100 / ($t1 - $t0)" | bc -l) $rss $(maps_kib "$pid")"
	case $name in
	busy* | serve) busy_stop ;;
	esac
}

: >"$tmp/results"
for prof in $PROFILERS; do
	if [ "$prof" = perf ]; then
		perf record -q -a -g -o "$tmp/perf.data" >"$tmp/perf.log" 2>&1 &
		pid=$!
		sleep 2
	else
		port=$(free_port)
		# shellcheck disable=SC2086 # AUTOPROF_ARGS: words of flags
		"$prof" --web.listen-address=127.0.0.1:$port --log.level=warn ${AUTOPROF_ARGS:-} \
			>"$tmp/ap.log" 2>&1 &
		pid=$!
		for _ in $(seq 300); do
			[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/-/ready")" = 200 ] && break
			sleep 0.1
		done
	fi
	pids+=($pid)
	for ph in ${PHASES:-idle exec100 exec1000 new100 busy10 busy100 busy500}; do
		read -r name cpu rss maps < <(phase "$ph" "$pid" "$prof")
		printf '%-22s %-9s %6.3f %% CPU  RSS outside maps %6.1f MiB  maps %6.1f MiB  all %6.1f MiB\n' \
			"$prof" "$name" "$cpu" "$(echo "$rss / 1024" | bc -l)" \
			"$(echo "$maps / 1024" | bc -l)" "$(echo "($rss + $maps) / 1024" | bc -l)"
		echo "$prof $name $cpu $rss $maps" >>"$tmp/results"
		[ "$name" = serve ] && [ "$prof" != perf ] &&
			printf '%-22s %-9s RSS outside maps before the scrapes %6.1f MiB, profile %s bytes\n' \
				"$prof" serve "$(echo "$(cat "$tmp/serve.before") / 1024" | bc -l)" \
				"$(stat -c %s "$tmp/serve.pb.gz")"
		[ -n "${STACKS:-}" ] && [ "$prof" != perf ] && [[ $name == exec* || $name == new* ]] &&
			stacks "$name"
	done
	kill -INT "$pid"
	wait "$pid" 2>/dev/null || true
	rm -f "$tmp/perf.data"
done

python3 - "$tmp/results" $PROFILERS <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
profs = sys.argv[2:]
if len(profs) < 2:
    sys.exit(0)
a, b = profs[0], profs[1]
get = {(r[0], r[1]): (float(r[2]), int(r[3]) + int(r[4])) for r in rows}
print("%-9s %22s %22s %10s %10s" % ("phase", "CPU % (a / b)", "MiB (a / b)", "CPU ratio",
                                     "mem ratio"))
for ph in ("idle", "exec100", "exec1000", "new100", "busy10", "busy100", "busy500", "serve"):
    if (a, ph) not in get or (b, ph) not in get:
        continue  # not in PHASES
    (ca, ma), (cb, mb) = get[(a, ph)], get[(b, ph)]
    print("%-9s %10.2f / %-9.2f %10.1f / %-9.1f %10.2f %10.2f" % (
        ph, ca, cb, ma / 1024, mb / 1024, ca / cb if cb else float("inf"), ma / mb if mb else 0))
print("a = %s, b = %s; memory: RSS + BPF maps held" % (a, b))
PY
