#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs what autoprof needs to build, run and test on Debian bookworm. Idempotent: it does
# nothing (and needs no network) when every package is already there (and unpacked). libbpf
# 1.4 and bpftool come from bookworm-backports because bookworm's libbpf 1.1 lacks
# uprobe_multi and ring__ APIs.
set -euo pipefail

PKGS=(
	make gcc clang llvm pkg-config
	libelf-dev libdw-dev zlib1g-dev libzstd-dev
	libmicrohttpd-dev libyaml-dev libjansson-dev libcurl4-openssl-dev libgnutls28-dev libcrypt-dev
	libcap-dev
	libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
	golang-go golang-github-google-pprof-dev
	prometheus linux-perf libbpf-tools curl procps python3
	liblzma-dev libiberty-dev libc6-dbg g++ xz-utils gdb binutils bpftrace
	chromium fonts-dejavu-core
	openjdk-17-jdk-headless nodejs
	libjemalloc-dev libmimalloc-dev libgoogle-perftools-dev
	systemtap-sdt-dev
	# Lua's tests. luajit2 is OpenResty's LuaJIT, the one nginx's Lua module links; Debian's
	# luajit (upstream's) conflicts with it: it is unpacked, not installed (below). The test
	# runs an nginx of its own, on a port of its own.
	lua5.1 lua5.3 lua5.4 liblua5.1-0-dev liblua5.3-dev liblua5.4-dev luajit2
	nginx libnginx-mod-http-lua
)
# The web view is bundled with npm at build time (Makefile: web/). Any node >= 18 with npm will
# do, Debian's or another vendor's (whose nodejs package carries npm): ask for Debian's only
# when there is no npm at all.
NODE_PKGS=()
command -v npm >/dev/null 2>&1 || NODE_PKGS=(nodejs npm)
# Newer Go toolchains (beside Debian's 1.19) for tests/integration/test_gounwind.py.
BACKPORTS_PKGS=(libbpf-dev bpftool golang-1.22-go golang-1.23-go)

# Debian's upstream LuaJIT beside OpenResty's, for test_lua: its package unpacked (never
# installed, the two conflict) under this folder. Its luajit links the VM statically.
LUAJIT_UPSTREAM=/opt/autoprof-deps/luajit-upstream
unpack_luajit_upstream() {
	[ -x "$LUAJIT_UPSTREAM/usr/bin/luajit" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: $LUAJIT_UPSTREAM missing; run as root to unpack it" >&2
		return 1
	fi
	local tmp
	tmp=$(mktemp -d)
	# apt runs downloads as _apt: the folder must be its to write.
	chown _apt "$tmp" 2>/dev/null || true
	(cd "$tmp" && apt-get download -qq luajit)
	mkdir -p "$LUAJIT_UPSTREAM"
	dpkg-deb -x "$tmp"/luajit_*.deb "$LUAJIT_UPSTREAM"
	rm -rf "$tmp"
}

missing=("${NODE_PKGS[@]}")
for p in "${PKGS[@]}" "${BACKPORTS_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# bookworm's own libbpf-dev (1.1) does not count: we need the 1.4 API.
if dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null | grep -q '^1:1\.[0-3]\.'; then
	missing+=(libbpf-dev)
fi
if [ ${#missing[@]} -eq 0 ]; then
	unpack_luajit_upstream
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# bookworm-backports from the machine's own bookworm source (mirror, key): no other.
bash "$(dirname "$0")/apt-backports.sh"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${PKGS[@]}" "${NODE_PKGS[@]}"
apt-get install -y -qq --no-install-recommends -t bookworm-backports "${BACKPORTS_PKGS[@]}"
unpack_luajit_upstream
