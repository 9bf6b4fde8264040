#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cost of naming Lua frames, measured as bench/runtimes/python.sh measures Python's (its header
# says how; the shared part is bench/lib/interp.sh): bench/lua_workload.lua (lua_hot three
# times, lua_cold once, plain Lua loops) under each Lua installed (Debian's lua5.1, lua5.3,
# lua5.4, and luajit with its compiler off), ROUNDS times each way: bare, under a daemon naming Lua frames
# (--lua.enabled=true, the default: "lua on") and under one that does not (--lua.enabled=false,
# "lua off": the same samples without the Lua walk). The process is timed from outside (wall,
# user + system CPU). A native row in the same run: build/targets/cpu_shares (C, frame
# pointers) for as long as one Lua run, so its BPF time per sample sits beside the Lua ones
# (its wall and CPU are fixed by design; only the BPF columns mean anything there).
# LUAS="label=path[,arg...] ..." overrides the list. Exits non-zero on errors only, not on missed goals.
#   [BUILD=build] [ROUNDS=5] [LUA_ROUNDS=15000] bench/runtimes/lua.sh (or bench/runtimes.sh lua)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-5}
LUA_ROUNDS=${LUA_ROUNDS:-15000}
AP=$BUILD/autoprof
NATIVE=$BUILD/targets/cpu_shares

for c in bpftool curl python3; do
	command -v "$c" >/dev/null || { echo "$c is missing" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "run as root (BPF)" >&2; exit 1; }
make --no-print-directory -s BUILD="$BUILD" "$AP" "$NATIVE"

. bench/lib/common.sh

hold_bpf_stats

INTERP_SAMPLES=autoprof_lua_samples_total
INTERP_SHORT=lua
. bench/lib/interp.sh

# timed CMD...: runs CMD, prints "wall cpu" in seconds (CPU: user + system of the process).
timed() {
	local t
	t=$({ TIMEFORMAT='%R %U %S'; time "$@" >/dev/null; } 2>&1)
	awk '{printf "%.4f %.4f\n", $1, $2 + $3}' <<<"$t"
}

# row LABEL CMD...: ROUNDS of CMD bare, with Lua frames named and not, and the table's row.
row() {
	local label=$1 r
	shift
	: >"$tmp/$label.bare"
	: >"$tmp/$label.on"
	: >"$tmp/$label.off"
	for r in $(seq "$ROUNDS"); do
		timed "$@" >>"$tmp/$label.bare"
		under "$label.on" --lua.enabled=true timed "$@"
		under "$label.off" --lua.enabled=false timed "$@"
	done
	report "$label"
}

bench_lua() {
	local list=() cmd=() entry label path v secs=""
	if [ -n "${LUAS:-}" ]; then
		read -ra list <<<"$LUAS"
	else
		for v in 5.1 5.3 5.4; do
			[ -x /usr/bin/lua$v ] && list+=("lua$v=/usr/bin/lua$v")
		done
		# LuaJIT's interpreter (its compiler's traces make few frames to walk).
		[ -x /usr/bin/luajit ] && list+=("luajit=/usr/bin/luajit,-joff")
	fi
	[ "${#list[@]}" -gt 0 ] || { echo "no Lua installed (scripts/install-deps.sh)" >&2; exit 1; }
	echo "== lua: bench/lua_workload.lua $LUA_ROUNDS rounds, $ROUNDS runs each way, 99 Hz"
	header
	for entry in "${list[@]}"; do
		label=${entry%%=*}
		path=${entry#*=}
		# A command's words are separated by commas: LUAS's entries by spaces.
		IFS=, read -ra cmd <<<"$path"
		row "$label" "${cmd[@]}" bench/lua_workload.lua "$LUA_ROUNDS"
		[ -n "$secs" ] || secs=$(awk '{print int($1 + 0.5)}' "$tmp/$label.bare" | sort -n | tail -1)
	done
	row native "$NATIVE" "${secs:-8}"
}

bench_lua
