# SPDX-License-Identifier: GPL-2.0-only
# Fuzz targets (fuzz/fuzz_NAME.c, libFuzzer style) and their seed corpora (fuzz/corpus/NAME/).
# Each corpus is replayed as an ordinary unit test, $(BUILD)/tests/unit/test_fuzz_NAME (one PASS
# line per input); `make fuzz-NAME` builds the real fuzzer with clang (ASan + UBSan) and runs it
# for FUZZ_SECONDS on a copy of the corpus under $(BUILD)/fuzz/NAME-corpus (new inputs stay
# there: copy the crashing ones into fuzz/corpus/NAME/ by hand).
#   cfi       src/unwind/cfi.c's CFI parser
#   preload   the preload ring's parser and the user-space walk of its stack copies
# A target names the sources it links (FUZZ_SRCS_NAME) and the libraries the clang build needs
# (FUZZ_LIBS_NAME); fuzz/fuzz_NAME.h, when there, is its input layout.
FUZZ_SECONDS ?= 120
FUZZ_MAX_LEN ?= 65536
FUZZ_NAMES := cfi preload
FUZZ_SRCS_cfi := src/unwind/cfi.c src/unwind/gocfi.c src/symbolize/gosym.c src/symbolize/elf.c \
	src/lib/log.c
FUZZ_LIBS_cfi := -lelf
FUZZ_SRCS_preload := src/collect/preload.c src/unwind/uwalk.c src/lib/log.c
FUZZ_LIBS_preload := -lbpf
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

define fuzz_rule
TEST_FIXTURES += $(BUILD)/tests/unit/test_fuzz_$(1)

$(BUILD)/tests/unit/test_fuzz_$(1): fuzz/replay.c fuzz/fuzz_$(1).c \
		$(patsubst %.c,$(BUILD)/obj/%.o,$(FUZZ_SRCS_$(1))) $(wildcard fuzz/fuzz_$(1).h)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) -DFUZZ_CORPUS='"$(abspath fuzz/corpus/$(1))"' $$(LDFLAGS) \
		$$(filter %.c %.o,$$^) -o $$@ $$(LDLIBS)

$(BUILD)/fuzz/fuzz_$(1): fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1)) $(wildcard fuzz/fuzz_$(1).h) \
		$(wildcard src/unwind/*.h src/collect/preload.h preload/*.h bpf/unwind*.h)
	@mkdir -p $$(@D)
	$$(CLANG) -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -Isrc $$(FUZZ_SAN) fuzz/fuzz_$(1).c \
		$(FUZZ_SRCS_$(1)) -o $$@ $(FUZZ_LIBS_$(1))

.PHONY: fuzz-$(1)
fuzz-$(1): $(BUILD)/fuzz/fuzz_$(1)
	@mkdir -p $(BUILD)/fuzz/$(1)-corpus
	cp -n fuzz/corpus/$(1)/* $(BUILD)/fuzz/$(1)-corpus/ 2>/dev/null || true
	cd $(BUILD)/fuzz && ./fuzz_$(1) -max_total_time=$$(FUZZ_SECONDS) -max_len=$$(FUZZ_MAX_LEN) \
		$(1)-corpus
endef
$(foreach f,$(FUZZ_NAMES),$(eval $(call fuzz_rule,$(f))))
