# SPDX-License-Identifier: GPL-2.0-only
# Programs with known call graphs that the integration tests profile. Frame pointers in leaves
# too (-mno-omit-leaf-frame-pointer): issue 2 walks frame pointers only. Here: target.h and the
# programs several suites run; each suite's own sit in tests/targets/SUITE/, built alike.
TARGET_CC := clang
# clang, because GCC 12 ignores -mno-omit-leaf-frame-pointer; no sibling calls so that every
# caller keeps its frame.
TARGET_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
		 -fno-optimize-sibling-calls \
		 -Wall -Wextra -Werror
TARGET_SRCS += $(wildcard tests/targets/common/*.c)
TEST_TARGETS += $(patsubst tests/targets/common/%.c,$(BUILD)/targets/%,\
	$(wildcard tests/targets/common/*.c))

$(BUILD)/targets/%: tests/targets/common/%.c tests/targets/common/target.h
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) $< -o $@ -lpthread
TEST_TARGETS += $(BUILD)/libautoprof_preload.so
