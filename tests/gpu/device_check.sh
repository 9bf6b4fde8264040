#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# GPU memory profiling on a real NVIDIA GPU with PyTorch, in one go (under 5 minutes), on a
# machine that has none of autoprof's build dependencies: it runs the bundle tests/gpu/bundle.sh
# made on the build machine (build/gpucheck/autoprof with LD_LIBRARY_PATH=build/gpucheck/lib)
# and tests/gpu/torch_keep.py, and checks
#  1. heap, twice: with the default caching allocator (segments from cudaMalloc) and with
#     PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (pages from cuMemCreate, api=vmm).
#     keep_weights keeps known tensors, scratch makes some and drops them; autoprof's live GPU
#     bytes for the process (gpuheap?pid=P&format=folded and /metrics) against
#     torch.cuda.memory_reserved() (expected ratio ~1.0) and memory_allocated(), the top stacks
#     and whether keep_weights is in them (tests/gpu/heap_report.py);
#  2. the cost at the PyTorch level: LOOP x torch.empty(1024, device="cuda") then del (timed
#     between two torch.cuda.synchronize(), median of REPEATS), without autoprof (before it
#     starts and after it stops, averaged) and with it; with the caching allocator (no CUDA call
#     per iteration) and with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (a cudaMalloc and a cudaFree per
#     iteration, LOOP_NOCACHE of them); the overhead per iteration in percent.
# Every step says what it does. Exit status: 0 when autoprof's totals are within TOL % of
# memory_reserved in both modes, 1 otherwise, 2 when autoprof does not start here (or is not
# bundled, or this is not root), 3 when there is no GPU or no PyTorch here.
#   tests/gpu/bundle.sh              (on the build machine, after make)
#   tests/gpu/device_check.sh        (on the GPU machine, as root or with sudo -n)
#   env: PYTHON=python3 LOOP=20000 LOOP_NOCACHE=5000 REPEATS=5 TOL=5 BUNDLE=build/gpucheck
# A dry run without a GPU, over the CUDA stand-ins (make build/gputargets/gpu_bench) and a fake
# torch (tests/gpu/faketorch): checks the bundle and this script, not CUDA or PyTorch:
#   PYTHONPATH=tests/gpu/faketorch FAKE_TORCH_LIB=$PWD/build/gputargets/lib tests/gpu/device_check.sh
set -eu
SELF=$(realpath "$0")
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
BUNDLE=${BUNDLE:-build/gpucheck}
LOOP=${LOOP:-20000}
LOOP_NOCACHE=${LOOP_NOCACHE:-5000}
REPEATS=${REPEATS:-5}
TOL=${TOL:-5}
HERE=tests/gpu
START=$(date +%s)

tmp=$(mktemp -d)
ap_pid=
prog_pid=
# shellcheck disable=SC2317  # (run by the trap)
cleanup() {
	if [ -n "$prog_pid" ]; then
		kill "$prog_pid" 2>/dev/null || true
		wait "$prog_pid" 2>/dev/null || true
	fi
	[ -z "$ap_pid" ] || stop_autoprof
	rm -rf "$tmp"
}
trap cleanup EXIT

step() { printf '\n== [+%ds] %s\n' "$(($(date +%s) - START))" "$*"; }
# fetch URL FILE: the body of a GET on autoprof into FILE (Python: curl may not be there).
fetch() {
	"$PYTHON" -S -c 'import sys, urllib.request
try:
    data = urllib.request.urlopen(sys.argv[1], timeout=30).read()
except Exception as e:
    sys.exit("%s: %s" % (sys.argv[1], e))
open(sys.argv[2], "wb").write(data)' "http://127.0.0.1:$port$1" "$2"
}
# metric NAME: its value in $tmp/metrics (0 when absent).
metric() { awk -v m="$1" '$1 == m {v = $2} END {print v + 0}' "$tmp/metrics" 2>/dev/null || echo 0; }
# json_get LINE KEY: one field of a line of JSON.
json_get() { "$PYTHON" -S -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
# wait_lines FILE N SECONDS: until FILE has N lines; 1 when prog_pid ended or time ran out.
wait_lines() {
	local i
	for i in $(seq $(($3 * 10))); do
		[ "$(wc -l <"$1")" -lt "$2" ] || return 0
		kill -0 "$prog_pid" 2>/dev/null || break
		sleep 0.1
	done
	[ "$(wc -l <"$1")" -ge "$2" ]
}
# say LINE: a line to the program on fd 3 (nothing, not SIGPIPE, when it has gone).
say() { (trap '' PIPE; echo "$1" >&3) 2>/dev/null || true; }
# The folded gpuheap's total for a pid (into $tmp/folded).
heap_total() {
	fetch "/debug/pprof/gpuheap?pid=$1&format=folded" "$tmp/folded" &&
		awk '{s += $NF} END {printf "%.0f\n", s}' "$tmp/folded"
}
stop_autoprof() {
	local i
	kill -TERM "$ap_pid" 2>/dev/null || true
	for i in $(seq 150); do kill -0 "$ap_pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$ap_pid" 2>/dev/null; then
		echo "autoprof did not stop in 15 s on SIGTERM: SIGKILL"
		kill -KILL "$ap_pid" 2>/dev/null || true
	fi
	wait "$ap_pid" 2>/dev/null || true
	ap_pid=
}

# ---- 1. a GPU and PyTorch --------------------------------------------------------------------
step "looking for an NVIDIA GPU and PyTorch ($PYTHON)"
if command -v nvidia-smi >/dev/null; then
	nvidia-smi -L 2>&1 | sed 's/^/  /' || true
	nvidia-smi --query-gpu=driver_version,memory.used,memory.total --format=csv 2>&1 |
		sed 's/^/  /' || true
else
	echo "  no nvidia-smi here"
fi
if ! command -v "$PYTHON" >/dev/null; then
	echo "no $PYTHON here, so no PyTorch: nothing to check (exit 3)"
	exit 3
fi
if ! info=$(timeout 120 "$PYTHON" -c 'import json, torch
ok = torch.cuda.is_available()
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": ok,
                  "device": torch.cuda.get_device_name(0) if ok else None,
                  "count": torch.cuda.device_count() if ok else 0}))' 2>&1); then
	printf '%s\n' "$info" | tail -3 | sed 's/^/  /'
	echo "PyTorch cannot be imported by $PYTHON here: nothing to check (exit 3)"
	exit 3
fi
info=$(printf '%s\n' "$info" | tail -1)
echo "  $info"
if [ "$(json_get "$info" gpu)" != True ]; then
	echo "PyTorch sees no CUDA GPU here: nothing to check (exit 3)"
	exit 3
fi

# ---- 2. the bundle starts --------------------------------------------------------------------
step "checking that autoprof can run here ($BUNDLE, $(uname -r))"
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		echo "  not root: running again under sudo"
		rm -rf "$tmp"
		exec sudo -n -E env PATH="$PATH" PYTHON="$(command -v "$PYTHON")" "$SELF"
	fi
	echo "autoprof needs root (BPF, uprobes): run this as root (exit 2)"
	exit 2
fi
if [ ! -x "$BUNDLE/autoprof" ] || [ ! -d "$BUNDLE/lib" ]; then
	echo "no $BUNDLE/autoprof: run tests/gpu/bundle.sh on the build machine and bring $BUNDLE (exit 2)"
	exit 2
fi
sed 's/^/  bundle: /' "$BUNDLE/MANIFEST" 2>/dev/null | grep -v ' lib/' || true
echo "  glibc here: $(ldd --version 2>&1 | head -1)"
[ -e /sys/kernel/btf/vmlinux ] || echo "  no /sys/kernel/btf/vmlinux: autoprof's BPF programs need the kernel's BTF"
if [ "$(printf '%s\n' 6.6 "$(uname -r | cut -d- -f1)" | sort -V | head -1)" != 6.6 ]; then
	echo "  kernel $(uname -r) is older than 6.6: GPU probes need uprobe_multi links (expect attach failures)"
fi
LIB=$(cd "$BUNDLE/lib" && pwd)
if ! out=$(LD_LIBRARY_PATH=$LIB "$BUNDLE/autoprof" --version 2>&1); then
	printf '%s\n' "$out" | sed 's/^/  /'
	# A bundled library built against a newer glibc than this machine's: this machine's own
	# copy of it, where there is one, instead.
	newer=$(printf '%s\n' "$out" | sed -n "s|.*version .GLIBC_[0-9.]*. not found (required by $LIB/\([^)]*\)).*|\1|p" | sort -u)
	if [ -n "$newer" ]; then
		echo "  these bundled libraries need a newer glibc than this machine's: $(printf '%s\n' "$newer" | tr '\n' ' '); using this machine's own"
		mkdir "$tmp/lib"
		for f in "$LIB"/*; do
			printf '%s\n' "$newer" | grep -qx "$(basename "$f")" || ln -s "$f" "$tmp/lib/"
		done
		LIB=$tmp/lib
		out=$(LD_LIBRARY_PATH=$LIB "$BUNDLE/autoprof" --version 2>&1) || {
			printf '%s\n' "$out" | sed 's/^/  /'
			echo "autoprof cannot run here, not even with this machine's own copies (exit 2)"
			exit 2
		}
	else
		echo "autoprof cannot run here (exit 2)"
		exit 2
	fi
fi
echo "  $out"
others=$(pgrep -x autoprof || true)
[ -z "$others" ] || echo "  other autoprof processes run here ($(echo "$others" | paste -sd' ' -)): their GPU probes cost the loops timed \"without autoprof\" too"

# ---- the PyTorch programs ----------------------------------------------------------------------
# loop_run NAME N [VAR=VALUE...]: torch_keep.py loop N REPEATS; its ns per iteration into
# $tmp/loop.NAME ("n/a" when it failed).
loop_run() {
	local name=$1 n=$2 line
	shift 2
	echo "  torch_keep.py loop $n $REPEATS ${*:-(caching allocator)}"
	if line=$(env "$@" timeout 150 "$PYTHON" "$HERE/torch_keep.py" loop "$n" "$REPEATS" 2>"$tmp/loop.err"); then
		line=$(printf '%s\n' "$line" | tail -1)
		echo "    $line"
		json_get "$line" ns_per_iter >"$tmp/loop.$name"
	else
		sed 's/^/    /' "$tmp/loop.err" | tail -5
		echo "    failed"
		echo n/a >"$tmp/loop.$name"
	fi
}
# heap_run MODE [VAR=VALUE...]: one torch_keep.py heap under autoprof, reported by
# heap_report.py; its status into $tmp/heap.MODE.rc.
heap_run() {
	local mode=$1 out=$tmp/heap.$1 pid libs n i rc prev total
	shift
	echo 1 >"$tmp/heap.$mode.rc"
	step "heap, $mode: torch_keep.py heap ${*:-(default caching allocator)}"
	rm -f "$tmp/in"
	mkfifo "$tmp/in"
	env "$@" timeout 240 "$PYTHON" "$HERE/torch_keep.py" heap <"$tmp/in" >"$out" 2>"$out.err" &
	prog_pid=$!
	exec 3>"$tmp/in"
	if ! wait_lines "$out" 1 120; then
		tail -5 "$out.err" | sed 's/^/  /'
		echo "  FAIL $mode: the program did not initialize CUDA"
		heap_end
		return 0
	fi
	echo "  CUDA initialized, no tensor yet: $(head -1 "$out")"
	if ! pid=$(json_get "$(head -1 "$out")" pid); then
		echo "  FAIL $mode: its first line is not the JSON expected"
		heap_end
		return 0
	fi
	libs=$(grep -oE '/[^ ]*/libcuda(rt)?\.so[^ /]*$' "/proc/$pid/maps" | sort -u || true)
	n=$(printf '%s' "$libs" | grep -c . || true)
	echo "  the process maps $n CUDA library files:"
	printf '%s\n' "$libs" | sed 's/^/    /'
	echo "  waiting for autoprof to probe them (autoprof_gpu_libraries >= $n)"
	for i in $(seq 300); do
		fetch /metrics "$tmp/metrics" || true
		[ "$(metric autoprof_gpu_libraries)" -lt "$n" ] || break
		sleep 0.1
	done
	echo "  autoprof_gpu_libraries $(metric autoprof_gpu_libraries), autoprof_gpu_attach_failures_total $(metric autoprof_gpu_attach_failures_total)"
	sleep 0.5
	echo "  allocating: keep_weights keeps 4 x 64 MiB + 4 KiB, scratch makes 3 x 32 MiB and drops them"
	say go
	if ! wait_lines "$out" 2 120; then
		tail -5 "$out.err" | sed 's/^/  /'
		echo "  FAIL $mode: the program did not allocate"
		heap_end
		return 0
	fi
	sed -n 2p "$out" >"$tmp/truth.$mode"
	echo "  PyTorch says: $(cat "$tmp/truth.$mode")"
	echo "  reading gpuheap?pid=$pid&format=folded until its total holds still"
	prev=-1
	for i in $(seq 50); do
		total=$(heap_total "$pid" || echo -1)
		[ "$total" != "$prev" ] || [ "$total" = 0 ] || break
		prev=$total
		sleep 0.2
	done
	cp "$tmp/folded" "$tmp/folded.$mode" 2>/dev/null || : >"$tmp/folded.$mode"
	fetch "/debug/pprof/gpuheap?pid=$pid" "$tmp/pprof.$mode" || true
	fetch /metrics "$tmp/metrics" || true
	cp "$tmp/metrics" "$tmp/metrics.$mode" 2>/dev/null || : >"$tmp/metrics.$mode"
	rc=0
	"$PYTHON" -S "$HERE/heap_report.py" "$mode" "$tmp/truth.$mode" "$tmp/folded.$mode" \
		"$tmp/pprof.$mode" "$tmp/metrics.$mode" "$TOL" || rc=$?
	echo "$rc" >"$tmp/heap.$mode.rc"
	heap_end
}
heap_end() {
	say end
	exec 3>&-
	wait "$prog_pid" 2>/dev/null || true
	prog_pid=
}

# ---- 3. the loops without autoprof -------------------------------------------------------------
step "timing the allocation loops without autoprof (1 of 2)"
loop_run cached.bare1 "$LOOP"
loop_run nocache.bare1 "$LOOP_NOCACHE" PYTORCH_NO_CUDA_MEMORY_CACHING=1

# ---- 4. autoprof -------------------------------------------------------------------------------
step "starting autoprof"
port=$("$PYTHON" -S -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LD_LIBRARY_PATH=$LIB "$BUNDLE/autoprof" --web.listen-address="127.0.0.1:$port" >"$tmp/ap.log" 2>&1 &
ap_pid=$!
up=0
for i in $(seq 600); do
	if ! kill -0 "$ap_pid" 2>/dev/null; then
		rc=0
		wait "$ap_pid" || rc=$?
		ap_pid=
		tail -20 "$tmp/ap.log" | sed 's/^/  /'
		echo "autoprof exited with status $rc at start (exit 2)"
		exit 2
	fi
	if fetch /metrics "$tmp/metrics" 2>/dev/null && grep -q autoprof_cpus_sampled "$tmp/metrics"; then
		up=1
		break
	fi
	sleep 0.1
done
if [ $up = 0 ]; then
	tail -20 "$tmp/ap.log" | sed 's/^/  /'
	echo "autoprof did not serve /metrics in 60 s (exit 2)"
	exit 2
fi
echo "  up on 127.0.0.1:$port after $((i / 10)).$((i % 10)) s, pid $ap_pid; GPU library files probed so far: $(metric autoprof_gpu_libraries)"

# ---- 5. heap, both allocators ------------------------------------------------------------------
heap_run default
heap_run expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

# ---- 6. the loops with autoprof ----------------------------------------------------------------
step "timing the allocation loops with autoprof running"
loop_run cached.ap "$LOOP"
loop_run nocache.ap "$LOOP_NOCACHE" PYTORCH_NO_CUDA_MEMORY_CACHING=1

step "autoprof's GPU counters, then stopping it"
fetch /metrics "$tmp/metrics" || true
grep -E '^autoprof_gpu_(libraries|attach_failures_total|calls_total|dropped_total|frees_unknown_total)' \
	"$tmp/metrics" | sed 's/^/  /' || true
grep -E ' (warn|error) +gpu' "$tmp/ap.log" | sort | uniq -c | head -10 | sed 's/^/  /' || true
stop_autoprof
echo "  stopped"

# ---- 7. the loops without autoprof again -------------------------------------------------------
step "timing the allocation loops without autoprof (2 of 2)"
loop_run cached.bare2 "$LOOP"
loop_run nocache.bare2 "$LOOP_NOCACHE" PYTORCH_NO_CUDA_MEMORY_CACHING=1

# ---- summary -----------------------------------------------------------------------------------
step "summary"
echo "$info"
printf '%-40s %7s %14s %16s %10s\n' "loop: torch.empty(1024) + del" "iters" "bare ns/iter" \
	"autoprof ns/iter" "overhead"
for row in "cached:caching allocator (no CUDA call):$LOOP" \
	"nocache:no caching (cudaMalloc+cudaFree each):$LOOP_NOCACHE"; do
	key=${row%%:*} rest=${row#*:}
	name=${rest%:*} n=${rest##*:}
	b1=$(cat "$tmp/loop.$key.bare1") b2=$(cat "$tmp/loop.$key.bare2") a=$(cat "$tmp/loop.$key.ap")
	awk -v name="$name" -v n="$n" -v b1="$b1" -v b2="$b2" -v a="$a" 'BEGIN {
		if (b1 == "n/a" || b2 == "n/a" || a == "n/a") {
			printf "%-40s %7d %14s %16s %10s\n", name, n, b1 "/" b2, a, "n/a"; exit
		}
		b = (b1 + b2) / 2
		printf "%-40s %7d %14.1f %16.1f %+9.2f%%   (bare runs %.1f and %.1f)\n", name, n, b, a,
			(a - b) / b * 100, b1, b2
	}'
done
status=0
for mode in default expandable; do
	rc=$(cat "$tmp/heap.$mode.rc")
	if [ -s "$tmp/truth.$mode" ] && [ -s "$tmp/folded.$mode" ]; then
		"$PYTHON" -S -c 'import json, sys
t = json.load(open(sys.argv[2]))
total = sum(int(float(l.rsplit(None, 1)[1])) for l in open(sys.argv[3]) if l.strip())
r = t["memory_reserved"]
print("heap %-10s autoprof %10.2f MiB, memory_reserved %10.2f MiB, memory_allocated %10.2f MiB, autoprof/reserved %.4f" % (
    sys.argv[1], total / 2**20, r / 2**20, t["memory_allocated"] / 2**20, total / r if r else 0))' \
			"$mode" "$tmp/truth.$mode" "$tmp/folded.$mode" || true
	fi
	echo "heap $mode: $([ "$rc" = 0 ] && echo "PASS (within" || echo "FAIL (not within") $TOL % of memory_reserved)"
	[ "$rc" = 0 ] || status=1
done
echo "device_check: exit $status ($(($(date +%s) - START)) s)"
exit $status
