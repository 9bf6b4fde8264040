#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# scripts/apt-backports.sh on made-up /etc/apt trees: bookworm-backports comes from the
# machine's bookworm source in its own format (one-line or deb822, options and key kept), is
# not added twice, and no bookworm source at all is a clear failure with nothing written.
set -u
script=$(dirname "$0")/../../scripts/apt-backports.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

check() {
	local name=$1
	shift
	if out=$("$@" 2>&1); then
		echo "PASS $name"
	else
		echo "FAIL $name: $out"
		failed=1
	fi
}

tree() {
	rm -rf "$tmp/etc" && mkdir -p "$tmp/etc/sources.list.d"
}

oneline() {
	tree
	cat >"$tmp/etc/sources.list" <<'L'
# mirror of this site
deb [signed-by=/usr/share/keyrings/site.gpg] http://mirror.example/debian bookworm main contrib
deb http://mirror.example/debian-security bookworm-security main
L
	bash "$script" "$tmp/etc" || return 1
	want='deb [signed-by=/usr/share/keyrings/site.gpg] http://mirror.example/debian bookworm-backports main'
	got=$(cat "$tmp/etc/sources.list.d/autoprof-backports.list")
	[ "$got" = "$want" ] || { echo "got '$got'"; return 1; }
	! grep -rq deb.debian.org "$tmp/etc" || { echo "deb.debian.org written"; return 1; }
	# Idempotent: a second run finds it and writes nothing more.
	bash "$script" "$tmp/etc" && [ "$(ls "$tmp/etc/sources.list.d" | wc -l)" -eq 1 ]
}

deb822() {
	tree
	cat >"$tmp/etc/sources.list.d/debian.sources" <<'S'
Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
# a comment
URIs: https://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
S
	bash "$script" "$tmp/etc" || return 1
	got=$(cat "$tmp/etc/sources.list.d/autoprof-backports.sources")
	want=$(printf '%s\n' "Types: deb" "URIs: https://mirror.example/debian" \
		"Suites: bookworm-backports" "Components: main" \
		"Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg")
	[ "$got" = "$want" ] || { echo "got '$got'"; return 1; }
	bash "$script" "$tmp/etc" && [ "$(ls "$tmp/etc/sources.list.d" | wc -l)" -eq 2 ]
}

present() {
	tree
	printf 'Types: deb\nURIs: http://m/debian\nSuites: bookworm bookworm-backports\n' \
		>"$tmp/etc/sources.list.d/debian.sources"
	bash "$script" "$tmp/etc" && [ "$(ls "$tmp/etc/sources.list.d" | wc -l)" -eq 1 ]
}

none() {
	tree
	echo 'deb http://mirror.example/debian trixie main' >"$tmp/etc/sources.list"
	printf 'Types: deb\nURIs: http://m/ubuntu\nSuites: noble\n' >"$tmp/etc/sources.list.d/u.sources"
	if out=$(bash "$script" "$tmp/etc" 2>&1); then
		echo "succeeded without a bookworm source"
		return 1
	fi
	grep -q "no Debian bookworm source" <<<"$out" || { echo "unclear error: $out"; return 1; }
	[ "$(ls "$tmp/etc/sources.list.d" | wc -l)" -eq 1 ]
}

check apt_backports_from_oneline_source oneline
check apt_backports_from_deb822_source deb822
check apt_backports_already_there present
check apt_backports_no_bookworm_source_fails none
exit $failed
