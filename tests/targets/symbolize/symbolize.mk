# SPDX-License-Identifier: GPL-2.0-only
# Targets for tests/integration/test_symbolize.py, built from tests/targets/symbolize/ into
# $(BUILD)/symtargets/: each spins in functions with known names, built the way the symbolizer
# must cope with (inlines, C++, Rust, Go, debug links, MiniDebugInfo, stripped libraries).
SYM_SRC := tests/targets/symbolize
SYM_DIR := $(BUILD)/symtargets
# Frame pointers in leaves too (clang; GCC 12 ignores -mno-omit-leaf-frame-pointer), no sibling
# calls so that every caller keeps its frame. Inlining stays on: sym_inline is about it.
SYM_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -Wall -Wextra -Werror -Wl,--build-id
SYM_RUSTC := $(firstword $(shell command -v rustc 2>/dev/null) \
	$(wildcard /root/.cargo/bin/rustc))
SYM_GO_DIR = $(abspath $(BUILD))/symgo
SYM_GO_ENV = HOME=$(SYM_GO_DIR)/home GOCACHE=$(SYM_GO_DIR)/cache GOPATH=$(SYM_GO_DIR)/path \
	GO111MODULE=off GOFLAGS= CGO_ENABLED=0
SYM_TARGETS := $(addprefix $(SYM_DIR)/,sym_inline sym_cxx sym_go sym_go_stripped sym_debuglink \
	sym_minidebug sym_libc sym_anon libanon.so rust.stamp)
TEST_TARGETS += $(SYM_TARGETS)

$(SYM_DIR)/sym_inline: $(SYM_SRC)/inline.c $(SYM_SRC)/spin_common.h
	@mkdir -p $(@D)
	clang $(SYM_CFLAGS) $< -o $@

# clang++ too: g++ 12 drops a leaf's frame pointer even with -fno-omit-frame-pointer, and
# with it the caller.
$(SYM_DIR)/sym_cxx: $(SYM_SRC)/cxxspin.cc
	@mkdir -p $(@D)
	clang++ $(SYM_CFLAGS) $< -o $@

$(SYM_DIR)/sym_libc: $(SYM_SRC)/libcspin.c $(SYM_SRC)/spin_common.h
	@mkdir -p $(@D)
	clang $(SYM_CFLAGS) $< -o $@

# Stripped, its DWARF and .symtab in sym_debuglink.debug beside it.
$(SYM_DIR)/sym_debuglink: $(SYM_SRC)/localspin.c $(SYM_SRC)/spin_common.h
	@mkdir -p $(@D)
	clang $(SYM_CFLAGS) $< -o $@.full
	objcopy --only-keep-debug $@.full $@.debug
	strip --strip-all $@.full -o $@.stripped
	objcopy --add-gnu-debuglink=$@.debug $@.stripped $@
	rm -f $@.full $@.stripped

# MiniDebugInfo as the gdb manual builds it (see tests/unit/debuginfo.mk): the function symbols
# .dynsym lacks, xz-compressed into .gnu_debugdata of the stripped binary; no DWARF anywhere.
$(SYM_DIR)/sym_minidebug: $(SYM_SRC)/localspin.c $(SYM_SRC)/spin_common.h
	@mkdir -p $(@D)
	@rm -rf $@.work && mkdir -p $@.work
	clang $(SYM_CFLAGS) -DMINIDEBUG $< -o $@.work/full
	objcopy --only-keep-debug $@.work/full $@.work/full.debug
	nm -D --format=posix --defined-only $@.work/full | awk '{ print $$1 }' | sort > $@.work/dynsyms
	nm --format=posix --defined-only $@.work/full | \
		awk '{ if ($$2 == "T" || $$2 == "t" || $$2 == "D") print $$1 }' | sort > $@.work/funcsyms
	comm -13 $@.work/dynsyms $@.work/funcsyms > $@.work/keep_symbols
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$@.work/keep_symbols $@.work/full.debug $@.work/mini
	xz -f $@.work/mini
	strip --strip-all -R .comment $@.work/full -o $@.work/stripped
	objcopy --add-section .gnu_debugdata=$@.work/mini.xz $@.work/stripped $@
	rm -rf $@.work

# No symbol table at all, no debug link.
$(SYM_DIR)/libanon.so: $(SYM_SRC)/libanon.c
	@mkdir -p $(@D)
	clang $(SYM_CFLAGS) -fPIC -shared $< -o $@.full
	strip --strip-all $@.full -o $@
	rm -f $@.full

$(SYM_DIR)/sym_anon: $(SYM_SRC)/anonspin.c $(SYM_SRC)/spin_common.h $(SYM_DIR)/libanon.so
	@mkdir -p $(@D)
	clang $(SYM_CFLAGS) $< -o $@ -L$(SYM_DIR) -lanon -Wl,-rpath,'$$ORIGIN'

$(SYM_DIR)/sym_go: $(SYM_SRC)/gohot/main.go
	@mkdir -p $(@D) $(SYM_GO_DIR)/home
	env $(SYM_GO_ENV) go build -o $@ $<

$(SYM_DIR)/sym_go_stripped: $(SYM_SRC)/gohot/main.go
	@mkdir -p $(@D) $(SYM_GO_DIR)/home
	env $(SYM_GO_ENV) go build -ldflags='-s -w' -o $@ $<

# Both Rust manglings; stable rustc calls "legacy" unstable, hence the retry. Without rustc
# nothing is built and the Rust tests skip.
$(SYM_DIR)/rust.stamp: $(SYM_SRC)/rustspin.rs
	@mkdir -p $(@D)
	@rm -f $(SYM_DIR)/rustspin-v0 $(SYM_DIR)/rustspin-legacy
	if [ -n "$(SYM_RUSTC)" ]; then \
		flags="-C opt-level=2 -C debuginfo=2 -C force-frame-pointers=yes" && \
		$(SYM_RUSTC) $$flags -C symbol-mangling-version=v0 $< -o $(SYM_DIR)/rustspin-v0 && \
		{ $(SYM_RUSTC) $$flags -C symbol-mangling-version=legacy $< \
			-o $(SYM_DIR)/rustspin-legacy 2>/dev/null || \
		  RUSTC_BOOTSTRAP=1 $(SYM_RUSTC) -Z unstable-options $$flags \
			-C symbol-mangling-version=legacy $< -o $(SYM_DIR)/rustspin-legacy; }; \
	else \
		echo "rustc not found: Rust symbolization targets not built"; \
	fi
	touch $@
