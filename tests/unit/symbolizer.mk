# SPDX-License-Identifier: GPL-2.0-only
# Process fixture for tests/unit/test_symbolizer.c: a PIE that waits in a named function.
$(BUILD)/fixtures/waiter: tests/fixtures/waiter.c
	@mkdir -p $(@D)
	$(CC) -O0 -g -fno-inline -fPIE -pie -Wl,--build-id $< -o $@
TEST_FIXTURES += $(BUILD)/fixtures/waiter
