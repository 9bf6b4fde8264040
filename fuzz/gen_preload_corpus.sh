#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Rewrites fuzz/corpus/preload/'s seeds (ring-*: real rings, edge-*: hand-made) with
# fuzz/gen_preload_corpus.c, run under the shim with every allocation sampled, a 64 KiB ring
# and stack copies of at most 2 KiB (small seeds; the ring wraps quickly). Needs
# $BUILD/libautoprof_preload.so (make).
#   bash fuzz/gen_preload_corpus.sh
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
out=fuzz/corpus/preload
mkdir -p "$BUILD/fuzz" "$out"
cc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer -I. \
	fuzz/gen_preload_corpus.c -o "$BUILD/fuzz/gen_preload_corpus" -ldl -lpthread
rm -f "$out"/ring-* "$out"/edge-*
"$BUILD/fuzz/gen_preload_corpus" --edge "$out"
AUTOPROF_MEMORY_SAMPLE_INTERVAL=1 AUTOPROF_PRELOAD_RING_SIZE=65536 AUTOPROF_PRELOAD_STACK_MAX=2048 \
	LD_PRELOAD="$PWD/$BUILD/libautoprof_preload.so" "$BUILD/fuzz/gen_preload_corpus" "$out"
