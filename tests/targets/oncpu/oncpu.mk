# SPDX-License-Identifier: GPL-2.0-only
# Targets of tests/integration/test_oncpu.py besides tests/targets/common/cpu_shares.c, built
# like common's into $(BUILD)/targets/.
TARGET_SRCS += $(wildcard tests/targets/oncpu/*.c)
TEST_TARGETS += $(patsubst tests/targets/oncpu/%.c,$(BUILD)/targets/%,\
	$(wildcard tests/targets/oncpu/*.c))

$(BUILD)/targets/%: tests/targets/oncpu/%.c tests/targets/common/target.h
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -Itests/targets/common $< -o $@ -lpthread
