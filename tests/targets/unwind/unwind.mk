# SPDX-License-Identifier: GPL-2.0-only
# Targets for tests/integration/test_unwind.py, built from tests/targets/unwind/ into
# $(BUILD)/uwtargets/: call chains that only table unwinding (.eh_frame) can walk, because the
# code keeps no frame pointers (-fomit-frame-pointer, Rust without them, glibc, a GCC leaf) or
# crosses a signal frame, a dlopen()ed library, or more frames than a sample holds.
UW_SRC := tests/targets/unwind
UW_DIR := $(BUILD)/uwtargets
# No sibling calls, so that every caller keeps its frame (the sources add empty asm after calls
# too); -fomit-frame-pointer is what GCC does at -O2 anyway, spelled out because it is the point.
UW_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wall -Wextra -Werror \
	-Wl,--build-id
UW_RUSTC := $(firstword $(shell command -v rustc 2>/dev/null) \
	$(wildcard /root/.cargo/bin/rustc))
UW_TARGETS := $(addprefix $(UW_DIR)/,uw_c uw_cxx uw_fpleaf uw_sleep uw_signal uw_dlopen \
	libuwdl.so uw_deep uw_branch rust.stamp)
TEST_TARGETS += $(UW_TARGETS)

$(UW_DIR)/uw_c: $(UW_SRC)/uw_c.c $(UW_SRC)/uw_common.h
	@mkdir -p $(@D)
	gcc $(UW_CFLAGS) $< -o $@

# Exceptions on (the default): cx_middle throws through its own frame to cx_outer.
$(UW_DIR)/uw_cxx: $(UW_SRC)/uw_cxx.cc
	@mkdir -p $(@D)
	g++ $(UW_CFLAGS) $< -o $@

# Frame pointers everywhere, which GCC 12 still leaves out of leaf functions.
$(UW_DIR)/uw_fpleaf: $(UW_SRC)/uw_fpleaf.c $(UW_SRC)/uw_common.h
	@mkdir -p $(@D)
	gcc $(filter-out -fomit-frame-pointer,$(UW_CFLAGS)) -fno-omit-frame-pointer $< -o $@

$(UW_DIR)/uw_branch: $(UW_SRC)/uw_branch.c $(UW_SRC)/uw_common.h
	@mkdir -p $(@D)
	gcc $(UW_CFLAGS) -pthread $< -o $@

$(UW_DIR)/uw_sleep: $(UW_SRC)/uw_sleep.c $(UW_SRC)/uw_common.h
	@mkdir -p $(@D)
	gcc $(UW_CFLAGS) $< -o $@

$(UW_DIR)/uw_signal: $(UW_SRC)/uw_signal.c $(UW_SRC)/uw_common.h
	@mkdir -p $(@D)
	gcc $(UW_CFLAGS) $< -o $@

$(UW_DIR)/libuwdl.so: $(UW_SRC)/uwdl_lib.c
	@mkdir -p $(@D)
	gcc $(UW_CFLAGS) -fPIC -shared $< -o $@

# Not linked against libuwdl.so: it loads it with dlopen, after its start.
$(UW_DIR)/uw_dlopen: $(UW_SRC)/uw_dlopen.c $(UW_SRC)/uw_common.h $(UW_DIR)/libuwdl.so
	@mkdir -p $(@D)
	gcc $(UW_CFLAGS) $< -o $@ -ldl

$(UW_DIR)/uw_deep: $(UW_SRC)/uw_deep.c $(UW_SRC)/uw_common.h
	@mkdir -p $(@D)
	gcc $(UW_CFLAGS) $< -o $@ -lpthread

# Without rustc nothing is built and the Rust test skips.
$(UW_DIR)/rust.stamp: $(UW_SRC)/uw_rust.rs
	@mkdir -p $(@D)
	@rm -f $(UW_DIR)/uw_rust
	if [ -n "$(UW_RUSTC)" ]; then \
		$(UW_RUSTC) -C opt-level=2 -C debuginfo=2 -C force-frame-pointers=no $< \
			-o $(UW_DIR)/uw_rust; \
	else \
		echo "rustc not found: uw_rust not built"; \
	fi
	touch $@
