# SPDX-License-Identifier: GPL-2.0-only
# Fuzz targets (fuzz/fuzz_*.c, libFuzzer style) and their seed corpora (fuzz/corpus/NAME/).
# Each corpus is replayed as an ordinary unit test, $(BUILD)/tests/unit/test_fuzz_NAME (one PASS
# line per input); `make fuzz-cfi` builds the real fuzzer with clang (ASan + UBSan) and runs it
# for FUZZ_SECONDS on a copy of the corpus under $(BUILD)/fuzz/ (new inputs stay there: copy the
# crashing ones into fuzz/corpus/cfi/ by hand).
FUZZ_SECONDS ?= 120
FUZZ_CFI_SRCS := src/unwind/cfi.c src/lib/log.c
TEST_FIXTURES += $(BUILD)/tests/unit/test_fuzz_cfi

$(BUILD)/tests/unit/test_fuzz_cfi: fuzz/replay.c fuzz/fuzz_cfi.c $(patsubst %.c,$(BUILD)/obj/%.o,$(FUZZ_CFI_SRCS))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DFUZZ_CORPUS='"$(abspath fuzz/corpus/cfi)"' $(LDFLAGS) $^ -o $@ $(LDLIBS)

FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
$(BUILD)/fuzz/fuzz_cfi: fuzz/fuzz_cfi.c $(FUZZ_CFI_SRCS) $(wildcard src/unwind/*.h bpf/unwind.h)
	@mkdir -p $(@D)
	$(CLANG) -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -Isrc $(FUZZ_SAN) fuzz/fuzz_cfi.c \
		$(FUZZ_CFI_SRCS) -o $@ -lelf

.PHONY: fuzz-cfi
fuzz-cfi: $(BUILD)/fuzz/fuzz_cfi
	@mkdir -p $(BUILD)/fuzz/cfi-corpus
	cp -n fuzz/corpus/cfi/* $(BUILD)/fuzz/cfi-corpus/ 2>/dev/null || true
	cd $(BUILD)/fuzz && ./fuzz_cfi -max_total_time=$(FUZZ_SECONDS) -max_len=65536 cfi-corpus
