# SPDX-License-Identifier: GPL-2.0-only
# The target of tests/integration/test_hostile.py (anon_exec), built like
# tests/targets/common/'s into $(BUILD)/targets/.
TARGET_SRCS += $(wildcard tests/targets/hostile/*.c)
TEST_TARGETS += $(patsubst tests/targets/hostile/%.c,$(BUILD)/targets/%,\
	$(wildcard tests/targets/hostile/*.c))

$(BUILD)/targets/%: tests/targets/hostile/%.c tests/targets/common/target.h
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -Itests/targets/common $< -o $@ -lpthread
