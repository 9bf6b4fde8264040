#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs the test executables and tallies their "PASS/FAIL/SKIP name" lines.
#   tests/run.sh unit|integration|all [filter]
# Unit tests are build/tests/unit/test_*; integration tests are tests/integration/test_*.{sh,py}.
set -u
BUILD=${BUILD:-build}
what=${1:-all}
filter=${2:-}
passed=0 failed=0 skipped=0
failures=()

run_one() {
	local name=$1
	shift
	local out rc
	echo "== $name"
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/   /'
	local p f s
	p=$(printf '%s\n' "$out" | grep -c '^PASS ')
	f=$(printf '%s\n' "$out" | grep -c '^FAIL ')
	s=$(printf '%s\n' "$out" | grep -c '^SKIP ')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# A crash or an error outside any test still counts as a failure.
		f=1
		printf '   FAIL %s: exited with status %d\n' "$name" "$rc"
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$f" -eq 0 ] || failures+=("$name")
}

if [ "$what" = unit ] || [ "$what" = all ]; then
	for t in "$BUILD"/tests/unit/test_*; do
		[ -x "$t" ] || continue
		[ -z "$filter" ] || [[ $t == *$filter* ]] || continue
		run_one "unit/$(basename "$t")" "$t"
	done
fi
if [ "$what" = integration ] || [ "$what" = all ]; then
	for t in tests/integration/test_*.sh tests/integration/test_*.py; do
		[ -f "$t" ] || continue
		[ -z "$filter" ] || [[ $t == *$filter* ]] || continue
		case $t in
		*.sh) run_one "integration/$(basename "$t")" env BUILD="$BUILD" bash "$t" ;;
		*.py) run_one "integration/$(basename "$t")" env BUILD="$BUILD" python3 "$t" ;;
		esac
	done
fi

[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ $((passed + failed)) -gt 0 ]
