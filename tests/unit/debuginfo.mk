# SPDX-License-Identifier: GPL-2.0-only
# Fixtures for tests/unit/test_debuginfo.c and tests/unit/test_demangle.c, under $(BUILD)/fixtures/.

CXX ?= g++
RUSTC ?= rustc

# debuginfo/prog is the program with all its symbols; every other file there is derived from it
# (or from prog-variant, a different build of the same source) the way distributions do it.
DI_DIR := $(BUILD)/fixtures/debuginfo
DI_CFLAGS := -O0 -g -fno-inline -fPIE -pie -Wl,--build-id
DI_FIXTURES := $(addprefix $(DI_DIR)/,prog prog.debug prog-stripped prog-linked prog-dotdebug \
	prog-global prog-badcrc prog-mini prog-badxz prog-bigxz root.stamp)
TEST_FIXTURES += $(DI_FIXTURES) $(BUILD)/fixtures/cxxsyms $(BUILD)/fixtures/rustsyms.stamp

$(DI_DIR)/prog: tests/fixtures/debuginfo.c
	@mkdir -p $(@D)
	$(CC) $(DI_CFLAGS) $< -o $@

$(DI_DIR)/prog-variant: tests/fixtures/debuginfo.c
	@mkdir -p $(@D)
	$(CC) $(DI_CFLAGS) -DDEBUGINFO_VARIANT $< -o $@

$(DI_DIR)/%.debug: $(DI_DIR)/%
	objcopy --only-keep-debug $< $@

$(DI_DIR)/prog-stripped: $(DI_DIR)/prog
	strip --strip-all $< -o $@

# Debug link to a file beside the binary.
$(DI_DIR)/prog-linked: $(DI_DIR)/prog-stripped $(DI_DIR)/prog.debug
	objcopy --add-gnu-debuglink=$(DI_DIR)/prog.debug $< $@

# Debug link to DIR/.debug/NAME.
$(DI_DIR)/prog-dotdebug: $(DI_DIR)/prog-stripped $(DI_DIR)/prog.debug
	@mkdir -p $(DI_DIR)/.debug
	cp $(DI_DIR)/prog.debug $(DI_DIR)/.debug/prog-dotdebug.debug
	objcopy --add-gnu-debuglink=$(DI_DIR)/.debug/prog-dotdebug.debug $< $@

# Debug link to ROOT/usr/lib/debug/DIR/NAME, the binary being /opt/app/prog-global in ROOT.
$(DI_DIR)/prog-global: $(DI_DIR)/prog-stripped $(DI_DIR)/prog.debug
	@mkdir -p $(DI_DIR)/root/usr/lib/debug/opt/app
	cp $(DI_DIR)/prog.debug $(DI_DIR)/root/usr/lib/debug/opt/app/prog-global.debug
	objcopy --add-gnu-debuglink=$(DI_DIR)/root/usr/lib/debug/opt/app/prog-global.debug $< $@

# Debug link whose CRC is prog.debug's, while the file of that name beside it is another build's.
$(DI_DIR)/prog-badcrc: $(DI_DIR)/prog-stripped $(DI_DIR)/prog.debug $(DI_DIR)/prog-variant.debug
	@mkdir -p $(DI_DIR)/tmp
	cp $(DI_DIR)/prog.debug $(DI_DIR)/tmp/prog-badcrc.debug
	objcopy --add-gnu-debuglink=$(DI_DIR)/tmp/prog-badcrc.debug $< $@
	cp $(DI_DIR)/prog-variant.debug $(DI_DIR)/prog-badcrc.debug
	rm -rf $(DI_DIR)/tmp

# ROOT/usr/lib/debug/.build-id/xx/rest.debug for prog; STALE holds another build's debug file
# under prog's build ID, as a leftover from an older package would.
$(DI_DIR)/root.stamp: $(DI_DIR)/prog.debug $(DI_DIR)/prog-variant.debug
	id=$$(readelf -n $(DI_DIR)/prog | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p') && \
	test -n "$$id" && \
	sub=.build-id/$$(echo $$id | cut -c1-2)/$$(echo $$id | cut -c3-).debug && \
	for r in root stale; do mkdir -p $$(dirname $(DI_DIR)/$$r/usr/lib/debug/$$sub); done && \
	cp $(DI_DIR)/prog.debug $(DI_DIR)/root/usr/lib/debug/$$sub && \
	cp $(DI_DIR)/prog-variant.debug $(DI_DIR)/stale/usr/lib/debug/$$sub
	touch $@

# MiniDebugInfo as the gdb manual builds it: the function symbols .dynsym lacks, in a
# symbols-only ELF file, xz-compressed into .gnu_debugdata of the stripped binary.
$(DI_DIR)/prog-mini: $(DI_DIR)/prog $(DI_DIR)/prog.debug
	@mkdir -p $(DI_DIR)/mini
	nm -D --format=posix --defined-only $< | awk '{ print $$1 }' | sort > $(DI_DIR)/mini/dynsyms
	nm --format=posix --defined-only $< | \
		awk '{ if ($$2 == "T" || $$2 == "t" || $$2 == "D") print $$1 }' | \
		sort > $(DI_DIR)/mini/funcsyms
	comm -13 $(DI_DIR)/mini/dynsyms $(DI_DIR)/mini/funcsyms > $(DI_DIR)/mini/keep_symbols
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$(DI_DIR)/mini/keep_symbols $(DI_DIR)/prog.debug $(DI_DIR)/mini/mini
	xz -f $(DI_DIR)/mini/mini
	strip --strip-all -R .comment $< -o $@.tmp
	objcopy --add-section .gnu_debugdata=$(DI_DIR)/mini/mini.xz $@.tmp $@
	rm -rf $@.tmp $(DI_DIR)/mini

# .gnu_debugdata that is not xz data.
$(DI_DIR)/prog-badxz: $(DI_DIR)/prog-stripped tests/fixtures/debuginfo.c
	objcopy --add-section .gnu_debugdata=tests/fixtures/debuginfo.c $< $@

# .gnu_debugdata that would decompress to 65 MiB, past the 64 MiB bound (ELF magic first, so
# that only the size can be what rejects it).
$(DI_DIR)/prog-bigxz: $(DI_DIR)/prog-stripped
	{ printf '\177ELF'; head -c 65M /dev/zero; } | xz -1 -c > $@.xz
	objcopy --add-section .gnu_debugdata=$@.xz $< $@
	rm -f $@.xz

# -O0 keeps each function out of line under its own mangled name.
$(BUILD)/fixtures/cxxsyms: tests/fixtures/cxxsyms.cpp
	@mkdir -p $(@D)
	$(CXX) -O0 -g $< -o $@

# Both Rust manglings. Stable rustc has made "legacy" an unstable choice even though it is its
# default, hence the retry with -Z unstable-options. Without rustc nothing is built and
# test_demangle skips its Rust cases.
$(BUILD)/fixtures/rustsyms.stamp: tests/fixtures/rustsyms.rs
	@mkdir -p $(@D)
	@rm -f $(BUILD)/fixtures/rustsyms-legacy $(BUILD)/fixtures/rustsyms-v0
	if command -v $(RUSTC) >/dev/null; then \
		$(RUSTC) -C debuginfo=0 -C opt-level=0 -C symbol-mangling-version=v0 $< \
			-o $(BUILD)/fixtures/rustsyms-v0 && \
		{ $(RUSTC) -C debuginfo=0 -C opt-level=0 -C symbol-mangling-version=legacy $< \
			-o $(BUILD)/fixtures/rustsyms-legacy 2>/dev/null || \
		  RUSTC_BOOTSTRAP=1 $(RUSTC) -Z unstable-options -C debuginfo=0 -C opt-level=0 \
			-C symbol-mangling-version=legacy $< -o $(BUILD)/fixtures/rustsyms-legacy; }; \
	else \
		echo "$(RUSTC) not found: Rust demangling fixtures not built"; \
	fi
	touch $@
