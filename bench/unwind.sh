#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cost of walking user stacks: autoprof with --unwind.mode=fp (bpf_get_stack's frame-pointer
# walk), with --unwind.mode=table --unwind.walk-cache=false (unwind tables in BPF at every
# frame) and with the default (tables, and the walk cache of recent stacks' rules), side by
# side with `perf record --call-graph dwarf -F 99` (which copies 8 KiB of stack per sample to
# user space and unwinds later, in `perf script`/`perf report`), all on the same workload:
# $BUILD/bench/unwind_workload (bench/unwind_workload.cc, g++ -O2 -fomit-frame-pointer), THREADS
# threads (default: every CPU) in std::sort, std::map and std::ostringstream code under a few
# noinline levels, so that libstdc++ and glibc are on every stack.
#
# Each autoprof mode runs in its own daemon ($BUILD/autoprof on a free port), the three at
# once, so that they share the host's load (this VM's speed drifts by tens of % within
# minutes; one after the other, the drift was bigger than what the modes differ by). Each
# program runs on its own timer, so one's walk rarely warms the lines of another's. Three
# phases: start-up (until each serves /metrics with autoprof_cpus_sampled, then 2 s, not
# measured), QUIET seconds (default 5) without the workload, and DURATION seconds (default 20)
# with it, at the end of which one folded profile of the workload's pid for those seconds is
# served by each (so agent CPU includes symbolizing it). Per mode it reports:
# - BPF time per sample of that daemon's oncpu_sample program only (its prog ids come from
#   /proc/PID/fdinfo/* `prog_id:`; other autoprof instances on the machine are never read):
#   run_time_ns / run_cnt deltas from `bpftool prog show id`, with run-time stats held on by a
#   BPF_ENABLE_STATS fd for the whole run (refcounted: another benchmark switching the sysctl
#   kernel.bpf_stats_enabled off does not stop ours).
#   run_cnt counts every tick of every CPU, idle ones included, and an idle tick returns at
#   once. The raw mean is shown, and the mean per non-idle sample with idle ticks
#   (autoprof_samples_idle_total deltas) taken out of both sums, as a range: idle ticks charged
#   nothing (upper bound), and idle ticks charged the quiet phase's mean per run (lower bound:
#   an idle tick costs less than that, since the quiet phase's mean mixes idle ticks with
#   whatever else ran). With the workload keeping every CPU busy the two agree closely.
#   The non-idle samples are the workload's and those of anything else running meanwhile; the
#   workload's own share (from its profile) is shown.
# - agent CPU: the daemon's threads' CPU time (/proc/PID/task/*/schedstat, ns; the same as
#   utime+stime of /proc/PID/stat without its tick granularity) over the workload phase, as a
#   percentage of one CPU;
# - complete stacks: of the workload's samples in /debug/pprof/profile?pid=P&format=folded,
#   the share whose outermost frame is an entry point (_start for the main thread, clone3 for
#   the others) with uw_spin on the way and no [truncated] marker;
# - table walk outcomes (autoprof_unwind_stacks_total) and autoprof_unwind_table_bytes (every
#   process this daemon saw, not only the workload).
# perf runs `perf record --call-graph dwarf -F 99 -p WORKLOAD` for DURATION seconds: perf's CPU
# (its rusage, so including writing out perf.data at the end), perf.data size and bytes per
# sample, and `perf script`'s CPU to unwind the data and the share of complete stacks it finds
# (same test as above).
# Table memory for glibc + libstdc++: rows x 12 bytes from $BUILD/bench/unwind_tool (the same
# cfi__build the daemon uses), for the libc.so.6 and libstdc++.so.6 the workload loads.
# autoprof samples every process on the machine: its agent CPU includes building tables for
# whatever else runs, and with the default --unwind.memory-limit a big binary elsewhere (node,
# a fuzzer) can evict the workload's tables (evictions are shown). AP_FLAGS adds flags to both
# daemons, e.g. AP_FLAGS=--unwind.memory-limit=64MiB.
# Exits non-zero on errors only, not on missed goals.
#   [BUILD=build] [QUIET=5] [AP_FLAGS=...] [KEEP=DIR] bench/unwind.sh [DURATION] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DURATION=${1:-20}
THREADS=${2:-$(nproc)}
QUIET=${QUIET:-5}
AP=$BUILD/autoprof
WL=$BUILD/bench/unwind_workload
TOOL=$BUILD/bench/unwind_tool

for c in perf bpftool g++ curl python3; do
	command -v "$c" >/dev/null || { echo "$c is missing" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "run as root (BPF, perf -p)" >&2; exit 1; }
make --no-print-directory -s BUILD="$BUILD" "$AP"
have_tool=0
if [ -f bench/unwind_tool.mk ] && make --no-print-directory -s BUILD="$BUILD" "$TOOL" 2>/dev/null; then
	have_tool=1
fi
if [ ! -x "$WL" ] || [ bench/unwind_workload.cc -nt "$WL" ]; then
	mkdir -p "$(dirname "$WL")"
	g++ -O2 -g -fomit-frame-pointer -pthread bench/unwind_workload.cc -o "$WL"
fi

# KEEP=DIR keeps the snapshots, profiles and perf data there.
. bench/lib/common.sh

hold_bpf_stats


# snap MODE PHASE DAEMON PORT: what the report is computed from, one file per snapshot.
snap() {
	local f=$tmp/$1.$2
	oncpu_prog_stats "$3" >"$f.prog"
	cpu_ns "$3" >"$f.cpu"
	date +%s.%N >"$f.t"
	curl -sf "http://127.0.0.1:$4/metrics" >"$f.metrics"
}

MODES=(fp nocache table)
declare -A ap port
for mode in "${MODES[@]}"; do
	case $mode in
	fp) flags=(--unwind.mode=fp) ;;
	nocache) flags=(--unwind.mode=table --unwind.walk-cache=false) ;;
	table) flags=(--unwind.mode=table) ;;
	esac
	port[$mode]=$(free_port)
	# shellcheck disable=SC2086 # AP_FLAGS: extra flags, word-split on purpose
	"$AP" --web.listen-address=127.0.0.1:${port[$mode]} --log.level=warn "${flags[@]}" \
		${AP_FLAGS:-} >"$tmp/$mode.log" 2>&1 &
	ap[$mode]=$!
	pids+=(${ap[$mode]})
done
# Ready when serving and sampling (autoprof_cpus_sampled appears after the first drain).
for mode in "${MODES[@]}"; do
	for _ in $(seq 200); do
		curl -sf "http://127.0.0.1:${port[$mode]}/metrics" 2>/dev/null |
			grep -q '^autoprof_cpus_sampled' && break
		sleep 0.1
	done
	kill -0 "${ap[$mode]}" 2>/dev/null || {
		echo "autoprof ($mode) did not start:" >&2
		cat "$tmp/$mode.log" >&2
		exit 1
	}
done
snap_all() { for mode in "${MODES[@]}"; do snap "$mode" "$1" "${ap[$mode]}" "${port[$mode]}"; done; }
sleep 2
snap_all q0
sleep "$QUIET"
snap_all q1
"$WL" $((DURATION + 4)) "$THREADS" >/dev/null &
wl=$!
pids+=($wl)
sleep 1.5 # the daemons have seen the process (its tables are built on its first samples)
snap_all w0
sleep "$DURATION"
for mode in "${MODES[@]}"; do
	# Answered at once from the store: the last DURATION seconds.
	curl -sf -o "$tmp/$mode.folded" \
		"http://127.0.0.1:${port[$mode]}/debug/pprof/profile?seconds=$DURATION&pid=$wl&format=folded"
done
snap_all w1
kill "$wl" 2>/dev/null || true
wait "$wl" 2>/dev/null || true
for mode in "${MODES[@]}"; do
	kill -TERM "${ap[$mode]}"
	wait "${ap[$mode]}" 2>/dev/null || true
done

# perf: record the workload's process only; its rusage includes writing perf.data out.
"$WL" $((DURATION + 4)) "$THREADS" >/dev/null &
wl=$!
pids+=($wl)
sleep 1.5
python3 - "$wl" "$DURATION" "$tmp" >"$tmp/perf.cost" <<'PY'
import resource, signal, subprocess, sys, time
wl, dur, tmp = sys.argv[1], float(sys.argv[2]), sys.argv[3]
p = subprocess.Popen(["perf", "record", "-q", "--call-graph", "dwarf", "-F", "99", "-p", wl,
                      "-o", tmp + "/perf.data"], stdout=subprocess.DEVNULL,
                     stderr=open(tmp + "/perf.log", "w"))
t0 = time.time()
time.sleep(dur)
p.send_signal(signal.SIGINT)
p.wait()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.6f %.6f" % (r.ru_utime + r.ru_stime, time.time() - t0))
PY
kill "$wl" 2>/dev/null || true
wait "$wl" 2>/dev/null || true
[ -s "$tmp/perf.data" ] || { echo "perf record failed:" >&2; cat "$tmp/perf.log" >&2; exit 1; }
python3 - "$tmp" >"$tmp/script.cost" <<'PY'
import resource, subprocess, sys
tmp = sys.argv[1]
with open(tmp + "/perf.script", "w") as out:
    subprocess.run(["perf", "script", "-i", tmp + "/perf.data", "-F", "comm,tid,ip,sym"],
                   stdout=out, stderr=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.6f" % (r.ru_utime + r.ru_stime))
PY

libs=()
while read -r lib; do libs+=("$(readlink -f "$lib")"); done < <(ldd "$WL" | awk '/libc\.so\.6|libstdc\+\+\.so\.6/ {print $3}')
if [ "$have_tool" = 1 ]; then
	"$TOOL" "${libs[@]}" >"$tmp/tables"
else
	echo "skipped: $TOOL cannot be built (bench/unwind_tool.mk)" >"$tmp/tables"
fi

python3 - "$tmp" "$DURATION" "$THREADS" "$QUIET" "$(nproc)" <<'PY'
import os, re, sys
tmp, dur, threads, quiet, ncpu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
nan = float("nan")
ROOTS = {"_start", "clone3", "__clone3", "clone", "__clone"}


def div(a, b):
    return a / b if b else nan


def metrics(path):
    m = {}
    for ln in open(path):
        if ln.startswith("#") or not ln.strip():
            continue
        k, v = ln.rsplit(None, 1)
        m[k] = float(v)
    return m


def snap(mode, phase):
    f = f"{tmp}/{mode}.{phase}"
    t, c = map(int, open(f + ".prog").read().split())
    return {"run_ns": t, "run_cnt": c, "cpu": int(open(f + ".cpu").read()),
            "t": float(open(f + ".t").read()), "m": metrics(f + ".metrics")}


def delta(a, b, key):
    return b["m"].get(key, 0) - a["m"].get(key, 0)


def complete_share(stacks):
    """stacks: (frames outermost first, count)."""
    total = done = 0
    for frames, n in stacks:
        total += n
        if frames and frames[0] in ROOTS and "[truncated]" not in frames and \
                any(f.startswith("uw_spin") for f in frames):
            done += n
    return done, total


res = {}
for mode in ("fp", "nocache", "table"):
    q0, q1, w0, w1 = (snap(mode, p) for p in ("q0", "q1", "w0", "w1"))
    idle_key = 'autoprof_samples_idle_total{profile="cpu"}'
    tq, nq = q1["run_ns"] - q0["run_ns"], q1["run_cnt"] - q0["run_cnt"]
    tw, nw = w1["run_ns"] - w0["run_ns"], w1["run_cnt"] - w0["run_cnt"]
    iw = delta(w0, w1, idle_key)
    c_quiet = div(tq, nq)
    stacks = []
    for ln in open(f"{tmp}/{mode}.folded"):
        s, n = ln.rstrip("\n").rsplit(" ", 1)
        stacks.append((s.split(";")[1:], int(n)))
    done, total = complete_share(stacks)
    wall = w1["t"] - w0["t"]
    uw = {r: delta(w0, w1, f'autoprof_unwind_stacks_total{{result="{r}"}}')
          for r in ("complete", "truncated_depth", "truncated_read", "truncated_rule",
                    "truncated_noinfo")}
    res[mode] = {
        "raw": div(tw, nw) / 1e3,
        "hi": div(tw, nw - iw) / 1e3,
        "lo": div(tw - iw * c_quiet, nw - iw) / 1e3 if iw else div(tw, nw) / 1e3,
        "quiet": c_quiet / 1e3, "runs": nw, "idle": iw, "wl": total, "complete": div(done, total),
        "cpu": (w1["cpu"] - w0["cpu"]) / 1e9 / wall * 100, "wall": wall, "uw": uw,
        "table_bytes": w1["m"].get("autoprof_unwind_table_bytes", nan),
        "fp_only": delta(w0, w1, "autoprof_unwind_stacks_fp_only_total"),
        "evictions": delta(w0, w1, "autoprof_unwind_table_evictions_total"),
        "build_s": delta(w0, w1, "autoprof_unwind_table_build_seconds_total"),
        "cached": delta(w0, w1, "autoprof_unwind_frames_cached_total"),
        "frames": sum(delta(w0, w1, f'autoprof_unwind_frames_total{{method="{k}"}}')
                      for k in ("table", "fp")),
    }

pcpu, pwall = map(float, open(f"{tmp}/perf.cost").read().split())
script_cpu = float(open(f"{tmp}/script.cost").read())
pdata = os.path.getsize(f"{tmp}/perf.data")
pstacks, cur = [], None
for ln in open(f"{tmp}/perf.script", errors="replace"):
    if not ln.strip():
        if cur is not None:
            pstacks.append((cur[::-1], 1))
        cur = None
    elif not ln[0].isspace():
        cur = []
    elif cur is not None:
        parts = ln.split(None, 1)
        cur.append(re.sub(r"\+0x[0-9a-f]+$", "", parts[1].strip()) if len(parts) > 1 else "?")
if cur is not None:
    pstacks.append((cur[::-1], 1))
pdone, ptotal = complete_share(pstacks)

fp, nc, tb = res["fp"], res["nocache"], res["table"]
print(f"user stack walking, workload: {threads} threads of bench/unwind_workload (-O2 -fomit-frame-pointer, "
      f"C++ over libstdc++ and glibc), {ncpu} CPUs, 99 Hz, {dur} s per profiler")
print("table = the default (unwind tables and the walk cache); no cache = --unwind.walk-cache=false")
print(f"{'':38}{'autoprof fp':>13}{'table, no cache':>17}{'table':>10}{'table/fp':>10}{'table/no cache':>16}")


def row(name, a, n, b, fmt):
    print(f"{name:38}{a:13{fmt}}{n:17{fmt}}{b:10{fmt}}{div(b, a):10.3f}{div(b, n):16.3f}")


for key, name, fmt in (("raw", "BPF us/sample, all runs (raw)", ".2f"),
                       ("hi", "BPF us/sample, non-idle, upper bound", ".2f"),
                       ("lo", "BPF us/sample, non-idle, lower bound", ".2f"),
                       ("runs", "BPF runs (idle ticks among them)", ".0f")):
    row(name, fp[key], nc[key], tb[key], fmt)
print(f"{'':38}" + "".join(f"{'(' + str(int(r['idle'])) + ')':>{w}}" for r, w in ((fp, 13), (nc, 17), (tb, 10))))
row("workload samples in its profile", fp["wl"], nc["wl"], tb["wl"], ".0f")
row("complete workload stacks, %", fp["complete"] * 100, nc["complete"] * 100, tb["complete"] * 100, ".1f")
row("agent CPU, % of one CPU", fp["cpu"], nc["cpu"], tb["cpu"], ".3f")
print(f"quiet-phase BPF us/run (idle ticks + other processes): fp {fp['quiet']:.2f}, "
      f"no cache {nc['quiet']:.2f}, table {tb['quiet']:.2f}")
print(f"frames from the walk cache (all processes): {tb['cached']:.0f} of {tb['frames']:.0f} "
      f"({div(tb['cached'], tb['frames']) * 100:.1f} %)")
u = tb["uw"]
walked = sum(u.values())
print(f"table walks (all processes): {walked:.0f}, complete {div(u['complete'], walked) * 100:.1f} %, "
      + ", ".join(f"{k} {v:.0f}" for k, v in u.items() if k != "complete" and v)
      + f"; stacks by frame pointers before tables were ready: {tb['fp_only']:.0f}")
print(f"autoprof_unwind_table_bytes (all processes the table daemon saw): {tb['table_bytes'] / 2**20:.2f} MiB; "
      f"during the run: {tb['evictions']:.0f} tables evicted, {tb['build_s']:.2f} s building tables")
print()
print(f"{'':38}{'autoprof table':>16}{'perf dwarf':>12}{'ratio':>10}")
print(f"{'CPU while recording, % of one CPU':38}{tb['cpu']:16.3f}{pcpu / pwall * 100:12.3f}"
      f"{div(tb['cpu'], pcpu / pwall * 100):10.3f}")
post = (pcpu + script_cpu) / pwall * 100
print(f"{'CPU incl. unwinding (perf script), %':38}{tb['cpu']:16.3f}{post:12.3f}{div(tb['cpu'], post):10.3f}")
print(f"{'complete workload stacks, %':38}{tb['complete'] * 100:16.1f}{div(pdone, ptotal) * 100:12.1f}")
print(f"perf: {ptotal} samples, perf.data {pdata / 2**20:.1f} MiB ({div(pdata, ptotal) / 1024:.1f} KiB/sample), "
      f"perf record {pcpu:.2f} s CPU, perf script {script_cpu:.2f} s CPU")
print()
tables = open(f"{tmp}/tables").read()
print("unwind tables of the workload's glibc and libstdc++ ($BUILD/bench/unwind_tool):")
print(tables.rstrip())
m = re.search(r"^total\s+(\d+)\s+(\d+)", tables, re.M)
tbytes = int(m.group(2)) if m else None
print()
print(f"goals: BPF < 5 us per non-idle sample (table) -> {'met' if tb['hi'] < 5 else 'MISSED'} "
      f"({tb['lo']:.2f}-{tb['hi']:.2f} us); table memory < 2 MB for glibc + libstdc++ -> "
      + ("skipped" if tbytes is None else f"{'met' if tbytes < 2e6 else 'MISSED'} ({tbytes / 1e6:.2f} MB)"))
PY
