# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by bench/runtimes/{python,lua}.sh after bench/lib/common.sh, with AP (the daemon) set:
# an interpreted workload bare and under fresh daemons with the runtime's frames named and not,
# and one table row per interpreter. The sourcing script sets INTERP_SAMPLES (the metric that
# counts samples with the runtime's frames) and INTERP_SHORT (its short name in the titles),
# and calls hold_bpf_stats first.

# metric FILE NAME: a sample's value (0 when absent).
metric() { awk -v k="$2" '$1 == k {print $2; f = 1} END {if (!f) print 0}' "$1"; }

# start_daemon [FLAGS...]: sets AP_PID, AP_PORT.
start_daemon() {
	AP_PORT=$(free_port)
	"$AP" --web.listen-address=127.0.0.1:$AP_PORT --log.level=warn "$@" >"$tmp/ap.log" 2>&1 &
	AP_PID=$!
	pids+=($AP_PID)
	wait_ready "$AP_PORT" || true
	kill -0 "$AP_PID" 2>/dev/null || { echo "autoprof did not start:" >&2; cat "$tmp/ap.log" >&2; exit 1; }
	wait_settled "$AP_PORT" # unwind tables of what runs now are built
}

stop_daemon() {
	kill "$AP_PID"
	wait "$AP_PID" 2>/dev/null || true
}

# snap NAME: the daemon's program stats and metrics now.
snap() {
	oncpu_prog_stats "$AP_PID" >"$tmp/$1.prog"
	curl -sf "http://127.0.0.1:$AP_PORT/metrics" >"$tmp/$1.metrics"
}

# under FILE FLAG CMD...: one run of CMD (printing "wall cpu") under a fresh daemon started with
# FLAG; appends "wall cpu bpf_ns runs idle python_samples" to $tmp/FILE.
under() {
	local file=$1 flag=$2 out
	shift 2
	start_daemon "$flag"
	snap s0
	out=$("$@")
	snap s1
	stop_daemon
	read -r t0 c0 <"$tmp/s0.prog"
	read -r t1 c1 <"$tmp/s1.prog"
	local i0 i1 p0 p1
	i0=$(metric "$tmp/s0.metrics" 'autoprof_samples_idle_total{profile="cpu"}')
	i1=$(metric "$tmp/s1.metrics" 'autoprof_samples_idle_total{profile="cpu"}')
	p0=$(metric "$tmp/s0.metrics" "$INTERP_SAMPLES")
	p1=$(metric "$tmp/s1.metrics" "$INTERP_SAMPLES")
	echo "$out $((t1 - t0)) $((c1 - c0)) $((i1 - i0)) $((p1 - p0))" >>"$tmp/$file"
}

# report LABEL: medians of the bare and autoprof runs, BPF time per sample with the runtime's
# frames named and without.
report() {
	python3 - "$tmp/$1" "$1" <<'PY'
import statistics, sys
rows = lambda ext: [list(map(float, l.split())) for l in open(sys.argv[1] + ext)]
bare, on, off = rows(".bare"), rows(".on"), rows(".off")
med = lambda rs, i: statistics.median(r[i] for r in rs)
def per_sample(rs):
    busy = sum(r[3] for r in rs) - sum(r[4] for r in rs)
    return (sum(r[2] for r in rs) / busy / 1e3 if busy else 0,
            sum(r[5] for r in rs) / busy * 100 if busy else 0)
bw, bc = med(bare, 0), med(bare, 1)
slow = lambda rs, i, base: (med(rs, i) / base - 1) * 100
us_on, share = per_sample(on)
us_off, _ = per_sample(off)
# What the walk adds per sample that has the runtime's frames: the difference spread over them.
walk = (us_on - us_off) / (share / 100) if share else 0
print(f"{sys.argv[2]:<14}{bw:>7.3f}{slow(on, 0, bw):>+8.1f}%{slow(off, 0, bw):>+8.1f}%"
      f"{bc:>7.3f}{slow(on, 1, bc):>+8.1f}%{slow(off, 1, bc):>+8.1f}%"
      f"{us_on:>8.2f}{us_off:>8.2f}{share:>7.0f}%{walk:>9.1f}")
PY
}

# header: the table's two title lines, in the words of INTERP_SHORT ("py", "lua").
header() {
	local s=$INTERP_SHORT
	printf '%-14s%7s%9s%9s%7s%9s%9s%8s%8s%8s%9s\n' "" "wall" "wall" "wall" "cpu" "cpu" "cpu" "BPF us" "BPF us" "$s" "walk us"
	printf '%-14s%7s%9s%9s%7s%9s%9s%8s%8s%8s%9s\n' "workload" "bare s" "$s on" "$s off" "bare s" "$s on" "$s off" "$s on" "$s off" "smp" "/$s smp"
}
