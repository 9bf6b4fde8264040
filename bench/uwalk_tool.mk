# SPDX-License-Identifier: GPL-2.0-only
# bench/uwalk_tool: ns per walk of a copied stack (unwinder__walk_copy) next to glibc's
# backtrace(), built on demand with what tests/unit/test_unwind links; not a test, so not in
# TEST_TARGETS.
$(BUILD)/bench/uwalk_tool: $(BUILD)/obj/bench/uwalk_tool.o $(call dep_objs,tests/unit/test_unwind.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
