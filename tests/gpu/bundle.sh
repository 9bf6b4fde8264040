#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Carries the build to a GPU machine that has none of autoprof's build dependencies (libbpf,
# libdw, libmicrohttpd, ...): copies build/autoprof and every shared library it needs that is
# not glibc's (ldd; glibc comes from the machine it runs on: libc, libm, libpthread, libdl,
# librt, the loader and the vDSO are left out) into build/gpucheck/{autoprof,lib/}, each
# library under the name the binary asks for, with a MANIFEST of where each came from. Prints
# the bundle's size (it must stay well under 60 MiB: a device run carries at most 64 MiB).
# tests/gpu/device_check.sh runs it there with LD_LIBRARY_PATH=build/gpucheck/lib.
#   tests/gpu/bundle.sh          (here, from anywhere, after make)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
AP=$BUILD/autoprof
OUT=$BUILD/gpucheck
MAX_MIB=60

[ -x "$AP" ] || { echo "$AP: build it first (make)" >&2; exit 1; }
command -v ldd >/dev/null || { echo "ldd is missing" >&2; exit 1; }

echo "bundling $AP into $OUT/"
rm -rf "$OUT"
mkdir -p "$OUT/lib"
cp "$AP" "$OUT/autoprof"
{
	echo "$("$AP" --version) from $(realpath "$AP")"
	# shellcheck disable=SC1091
	echo "built on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
} >"$OUT/MANIFEST"

# "NAME => PATH (ADDR)" for each library, the loader and the vDSO without "=>".
ldd "$AP" >"$OUT/ldd.txt"
if grep -q "not found" "$OUT/ldd.txt"; then
	echo "$AP: libraries not found:" >&2
	grep "not found" "$OUT/ldd.txt" >&2
	exit 1
fi
n=0
while read -r name arrow path _; do
	if [ "$arrow" != "=>" ] || [ -z "$path" ]; then
		continue
	fi
	case "$name" in
	libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux* | linux-vdso*)
		continue
		;;
	esac
	cp -L "$path" "$OUT/lib/$name"
	echo "lib/$name from $(readlink -f "$path")" >>"$OUT/MANIFEST"
	n=$((n + 1))
done <"$OUT/ldd.txt"
rm "$OUT/ldd.txt"

# The bundle must run on its own: every library the binary needs, from lib/ or from glibc.
if LD_LIBRARY_PATH=$OUT/lib ldd "$OUT/autoprof" | grep -v "$OUT/lib/" |
	grep -vE '^\s*(libc|libm|libpthread|libdl|librt)\.so|ld-linux|linux-vdso' | grep -q .; then
	echo "$OUT/autoprof needs libraries outside the bundle:" >&2
	LD_LIBRARY_PATH=$OUT/lib ldd "$OUT/autoprof" | grep -v "$OUT/lib/" >&2
	exit 1
fi
# The newest glibc any file needs: the GPU machine's should be at least that (where it is not,
# device_check.sh uses that machine's own copy of a library that needs a newer one).
glibc=$(for f in "$OUT/autoprof" "$OUT"/lib/*; do
	objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*'
done | sort -uV | tail -1)
echo "needs ${glibc:-an unknown glibc} or newer" >>"$OUT/MANIFEST"

bytes=$(du -sb "$OUT" | cut -f1)
echo "$OUT: autoprof and $n libraries, $(awk -v b="$bytes" 'BEGIN {printf "%.1f MiB (%d bytes)", b / 1048576, b}'), needs ${glibc:-an unknown glibc} or newer"
[ "$bytes" -lt $((MAX_MIB * 1024 * 1024)) ] || { echo "$OUT is over $MAX_MIB MiB" >&2; exit 1; }
