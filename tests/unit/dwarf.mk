# SPDX-License-Identifier: GPL-2.0-only
# DWARF fixtures for tests/unit/test_dwarf.c, built from tests/fixtures/inlines*.{c,cc} into
# $(BUILD)/fixtures/. -O2 so that gcc inlines, splits cold code and uses DW_AT_ranges; gcc 12
# writes DWARF 5 unless told otherwise.
DWARF_FIXTURE_DIR := $(BUILD)/fixtures
DWARF_FIXTURES := $(addprefix $(DWARF_FIXTURE_DIR)/,inlines inlines-dwarf4 inlines-cpp \
	inlines.debug inlines-nodebug)
TEST_FIXTURES += $(DWARF_FIXTURES)

$(DWARF_FIXTURE_DIR)/inlines: tests/fixtures/inlines.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $< -o $@

$(DWARF_FIXTURE_DIR)/inlines-dwarf4: tests/fixtures/inlines.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -gdwarf-4 $< -o $@

$(DWARF_FIXTURE_DIR)/inlines-cpp: tests/fixtures/inlines_cpp.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g $< -o $@

# What a distribution's -dbg package ships: DWARF with the code sections turned into NOBITS.
$(DWARF_FIXTURE_DIR)/inlines.debug: $(DWARF_FIXTURE_DIR)/inlines
	objcopy --only-keep-debug $< $@

$(DWARF_FIXTURE_DIR)/inlines-nodebug: $(DWARF_FIXTURE_DIR)/inlines
	objcopy --strip-debug $< $@
