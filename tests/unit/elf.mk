# SPDX-License-Identifier: GPL-2.0-only
# ELF fixtures for tests/unit/test_elf.c, built from tests/fixtures/*.c into $(BUILD)/fixtures/.
# -O0 keeps every function under its own name (no inlining, no .isra/.constprop clones).
ELF_FIXTURE_DIR := $(BUILD)/fixtures
ELF_FIXTURE_CFLAGS := -O0 -g -fno-inline
ELF_FIXTURES := $(addprefix $(ELF_FIXTURE_DIR)/,symbols-pie symbols-nopie symbols-stripped \
	symbols-nobuildid symbols-pie.debug libsym.so libsym-stripped.so)
TEST_FIXTURES += $(ELF_FIXTURES)

# -rdynamic puts the global functions in .dynsym too, which is all a stripped copy keeps.
$(ELF_FIXTURE_DIR)/symbols-pie: tests/fixtures/symbols.c
	@mkdir -p $(@D)
	$(CC) $(ELF_FIXTURE_CFLAGS) -fPIE -pie -rdynamic -Wl,--build-id $< -o $@

$(ELF_FIXTURE_DIR)/symbols-nopie: tests/fixtures/symbols.c
	@mkdir -p $(@D)
	$(CC) $(ELF_FIXTURE_CFLAGS) -fno-pie -no-pie -Wl,--build-id $< -o $@

$(ELF_FIXTURE_DIR)/symbols-nobuildid: tests/fixtures/symbols.c
	@mkdir -p $(@D)
	$(CC) $(ELF_FIXTURE_CFLAGS) -fPIE -pie -Wl,--build-id=none $< -o $@

$(ELF_FIXTURE_DIR)/symbols-stripped: $(ELF_FIXTURE_DIR)/symbols-pie
	strip --strip-all $< -o $@

# A separate debug file: .symtab kept, .dynsym and code turned into NOBITS.
$(ELF_FIXTURE_DIR)/symbols-pie.debug: $(ELF_FIXTURE_DIR)/symbols-pie
	objcopy --only-keep-debug $< $@

$(ELF_FIXTURE_DIR)/libsym.so: tests/fixtures/libsym.c
	@mkdir -p $(@D)
	$(CC) $(ELF_FIXTURE_CFLAGS) -shared -fPIC -Wl,--build-id $< -o $@

$(ELF_FIXTURE_DIR)/libsym-stripped.so: $(ELF_FIXTURE_DIR)/libsym.so
	strip --strip-all $< -o $@
