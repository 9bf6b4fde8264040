# SPDX-License-Identifier: GPL-2.0-only
# The latency probe tests' target (tests/integration/test_probes.py; test_hostile.py and
# test_privileges.py run it too), built into $(BUILD)/probetargets/ with symbols and line
# tables: handle() is fast, every tenth call it also takes slow_path(). Frame pointers
# everywhere and no inlining, so that every function keeps its own frame and its own symbol for
# the probes.
PT_SRC := tests/targets/probes
PT_DIR := $(BUILD)/probetargets
PT_CFLAGS := -O1 -g -D_GNU_SOURCE -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -fno-inline -Wall -Wextra -Werror
TEST_TARGETS += $(PT_DIR)/probe_target

$(PT_DIR)/probe_target: $(PT_SRC)/probe_target.c
	@mkdir -p $(@D)
	gcc $(PT_CFLAGS) $< -o $@

# Captured variables (tests/integration/test_capture.py): one source at -O0 and at -O2 -g.
TEST_TARGETS += $(PT_DIR)/capture_O0 $(PT_DIR)/capture_O2
$(PT_DIR)/capture_O0: $(PT_SRC)/capture_target.c
	@mkdir -p $(@D)
	gcc -O0 -g -Wall -Wextra -Werror $< -o $@
$(PT_DIR)/capture_O2: $(PT_SRC)/capture_target.c
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Werror $< -o $@
