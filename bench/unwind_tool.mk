# SPDX-License-Identifier: GPL-2.0-only
# bench/unwind_tool: rows, bytes and build time of the unwind tables of ELF files (cfi__build),
# built on demand; not a test, so not in TEST_TARGETS.
BENCH_UNWIND_SRCS := src/unwind/cfi.c src/unwind/cfi_builder.c src/unwind/gocfi.c src/symbolize/gosym.c \
	src/symbolize/elf.c src/lib/log.c bench/unwind_tool.c
BENCH_UNWIND_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(BENCH_UNWIND_SRCS))

$(BUILD)/bench/unwind_tool: $(BENCH_UNWIND_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
