# SPDX-License-Identifier: GPL-2.0-only
# Off-CPU workloads, built like tests/targets/common/'s into $(BUILD)/targets/: offcpu_waits
# for tests/integration/test_offcpu.py, pingpong for bench/offcpu.sh.
TARGET_SRCS += $(wildcard tests/targets/offcpu/*.c)
TEST_TARGETS += $(patsubst tests/targets/offcpu/%.c,$(BUILD)/targets/%,\
	$(wildcard tests/targets/offcpu/*.c))

$(BUILD)/targets/%: tests/targets/offcpu/%.c tests/targets/common/target.h
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -Itests/targets/common $< -o $@ -lpthread
