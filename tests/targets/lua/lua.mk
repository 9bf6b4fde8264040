# SPDX-License-Identifier: GPL-2.0-only
# Lua workloads for tests/integration/test_lua.py: the scripts run under Debian's lua5.x, and
# lua_embed, a C program linked to the shared liblua5.4 that resumes two coroutines itself.
TARGET_SRCS += tests/targets/lua/lua_embed.c
TEST_TARGETS += $(BUILD)/targets/lua_embed

$(BUILD)/targets/lua_embed: tests/targets/lua/lua_embed.c
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) $$(pkg-config --cflags lua5.4) $< -o $@ \
		$$(pkg-config --libs lua5.4)
