# SPDX-License-Identifier: GPL-2.0-only
# History workloads, built like tests/targets/common/'s into $(BUILD)/targets/: spike, a burst
# of CPU in spike_fn between idle spells, for tests/integration/test_history.py and
# bench/history.sh.
TARGET_SRCS += $(wildcard tests/targets/history/*.c)
TEST_TARGETS += $(patsubst tests/targets/history/%.c,$(BUILD)/targets/%,\
	$(wildcard tests/targets/history/*.c))

$(BUILD)/targets/%: tests/targets/history/%.c tests/targets/common/target.h
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -Itests/targets/common $< -o $@
