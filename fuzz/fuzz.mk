# SPDX-License-Identifier: GPL-2.0-only
# Fuzz targets (fuzz/fuzz_NAME.c, libFuzzer style) and their seed corpora (fuzz/corpus/NAME/).
# Each corpus is replayed as an ordinary unit test, $(BUILD)/tests/unit/test_fuzz_NAME (one PASS
# line per input); `make fuzz-NAME` builds the real fuzzer with clang (ASan + UBSan) and runs it
# for FUZZ_SECONDS on a copy of the corpus under $(BUILD)/fuzz/NAME-corpus (new inputs stay
# there: copy the crashing ones into fuzz/corpus/NAME/ by hand).
#   cfi       src/unwind/cfi.c's CFI parser
#   preload   the preload ring's parser and the user-space walk of its stack copies
#   elf       an ELF file's build ID, symbols and everything objsym loads from it (memfd)
#   dwarf     DWARF lines and inlined frames (src/symbolize/dwarf.c)
#   capture   a probe's captures read from DWARF into BPF reads (src/probes/capture.c)
#   gosym     a Go executable's .gopclntab (src/symbolize/gosym.c)
#   perfmap   a JIT's perf map and the names in it (src/symbolize/perfmap.c)
#   maps      /proc/PID/maps lines (src/lib/procmaps.c)
#   json      the bodies of POST /api/v1/probes and the memory-target requests
#   config    the YAML configuration file (src/config/config.c)
#   procctx   the OpenTelemetry process context's protobuf (src/proc/procctx.c)
#   pyframes  CPython code objects and line tables read from a process's memory
#   luaproto  Lua function prototypes, chunk names and line tables read likewise, and the
#             function names parsed from source lines (src/runtime/luaproto.c)
#   jvm       a JVM's attach-API replies and the perf map it writes
#   golabels  what golabels reads of a Go executable (version, struct offsets, runtime.tlsg)
#   webconfig the --web.config.file YAML (src/http/webconfig.c; bcrypt itself is crypt_r's)
#   histfile  the history's record files read back (src/history/histfile.c)
# A target names the sources it links (FUZZ_SRCS_NAME; gen/X.c is a generated protobuf source
# under $(BUILD)/gen) and the libraries the clang build needs (FUZZ_LIBS_NAME); fuzz/fuzz_NAME.h,
# when there, is its input layout. `make fuzz` runs every target for FUZZ_SECONDS each.
FUZZ_SECONDS ?= 120
FUZZ_MAX_LEN ?= 65536
FUZZ_NAMES := cfi preload elf dwarf capture gosym perfmap maps json config procctx pyframes luaproto jvm \
	golabels webconfig histfile
FUZZ_SRCS_cfi := src/unwind/cfi.c src/unwind/cfi_builder.c src/unwind/gocfi.c src/symbolize/gosym.c src/symbolize/elf.c \
	src/lib/log.c
FUZZ_LIBS_cfi := -lelf
FUZZ_SRCS_preload := src/memory/preload.c src/unwind/walk_copy.c src/lib/log.c src/lib/procmem.c
FUZZ_LIBS_preload := -lbpf
FUZZ_SRCS_elf := src/symbolize/elf.c src/symbolize/objsym.c src/symbolize/dwarf.c src/symbolize/dwarf_cu.c \
	src/symbolize/gosym.c src/symbolize/debuginfo.c src/symbolize/demangle.c \
	src/lib/strtab.c src/lib/array.c src/lib/ufile.c src/lib/procfs.c src/lib/log.c
FUZZ_LIBS_elf := -lelf -ldw -llzma -lz -liberty
FUZZ_SRCS_dwarf := src/symbolize/dwarf.c src/symbolize/dwarf_cu.c src/symbolize/elf.c src/lib/log.c src/lib/array.c src/lib/strtab.c
FUZZ_LIBS_dwarf := -lelf -ldw
FUZZ_SRCS_capture := src/probes/capture.c src/symbolize/elf.c src/lib/log.c
FUZZ_LIBS_capture := -lelf -ldw
FUZZ_SRCS_gosym := src/symbolize/gosym.c src/symbolize/elf.c src/lib/log.c
FUZZ_LIBS_gosym := -lelf
FUZZ_SRCS_perfmap := src/symbolize/perfmap.c src/lib/ufile.c src/lib/procfs.c src/lib/log.c
FUZZ_SRCS_maps := src/lib/procmaps.c src/lib/ufile.c src/lib/procfs.c src/lib/log.c
FUZZ_SRCS_json := src/probes/probespec.c src/memory/memtarget.c src/lib/json.c src/lib/buf.c
FUZZ_LIBS_json := -ljansson -lz
FUZZ_SRCS_config := src/config/config.c src/config/keytypes.c src/memory/memtarget.c \
	src/export/otlp_headers.c \
	src/lib/log.c src/lib/json.c src/lib/buf.c
FUZZ_LIBS_config := -lyaml -ljansson -lz
FUZZ_SRCS_procctx := src/proc/procctx.c src/lib/procmaps.c src/lib/ufile.c src/lib/procfs.c \
	src/lib/log.c src/lib/procmem.c \
	gen/opentelemetry/proto/processcontext/v1development/process_context.pb-c.c \
	gen/opentelemetry/proto/resource/v1/resource.pb-c.c \
	gen/opentelemetry/proto/common/v1/common.pb-c.c
FUZZ_LIBS_procctx := -lprotobuf-c
FUZZ_SRCS_pyframes := src/runtime/python.c src/runtime/pylines.c src/symbolize/elf.c src/lib/log.c src/lib/procmem.c \
	tests/unit/python_stubs.c
FUZZ_LIBS_pyframes := -lelf -lbpf
FUZZ_SRCS_luaproto := src/runtime/luaproto.c
FUZZ_SRCS_jvm := src/runtime/jvmattach.c src/symbolize/perfmap.c src/lib/ufile.c src/lib/procfs.c \
	src/lib/log.c
FUZZ_SRCS_golabels := src/runtime/golabels.c src/symbolize/elf.c src/lib/log.c
FUZZ_LIBS_golabels := -lelf -ldw
FUZZ_SRCS_webconfig := src/http/webconfig.c src/lib/log.c
FUZZ_LIBS_webconfig := -lyaml -lgnutls -lcrypt
FUZZ_SRCS_histfile := src/history/histfile.c src/lib/array.c src/lib/keyindex.c src/lib/strtab.c src/lib/buf.c
FUZZ_LIBS_histfile := -lz
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
# A source's object for the replay binary (gcc), and its path for the clang build.
fuzz_objs = $(patsubst gen/%.c,$(BUILD)/gen/%.o,$(filter gen/%,$(1))) \
	$(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out gen/%,$(1)))
fuzz_srcs = $(patsubst gen/%,$(BUILD)/gen/%,$(1))

define fuzz_rule
TEST_FIXTURES += $(BUILD)/tests/unit/test_fuzz_$(1)

$(BUILD)/tests/unit/test_fuzz_$(1): fuzz/replay.c fuzz/fuzz_$(1).c \
		$(call fuzz_objs,$(FUZZ_SRCS_$(1))) $(wildcard fuzz/fuzz_$(1).h fuzz/fuzz_file.h)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) -DFUZZ_CORPUS='"$(abspath fuzz/corpus/$(1))"' $$(LDFLAGS) \
		$$(filter %.c %.o,$$^) -o $$@ $$(LDLIBS)

$(BUILD)/fuzz/fuzz_$(1): fuzz/fuzz_$(1).c $(call fuzz_srcs,$(FUZZ_SRCS_$(1))) \
		$(wildcard fuzz/fuzz_$(1).h fuzz/fuzz_file.h src/*/*.h preload/*.h bpf/*.h) | $(SKELS) $(GEN_SRCS)
	@mkdir -p $$(@D)
	$$(CLANG) -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -I$(BUILD) -I$(BUILD)/gen -Isrc $$(FUZZ_SAN) \
		fuzz/fuzz_$(1).c $(call fuzz_srcs,$(FUZZ_SRCS_$(1))) -o $$@ $(FUZZ_LIBS_$(1))

.PHONY: fuzz-$(1)
fuzz-$(1): $(BUILD)/fuzz/fuzz_$(1)
	@mkdir -p $(BUILD)/fuzz/$(1)-corpus
	cp -n fuzz/corpus/$(1)/* $(BUILD)/fuzz/$(1)-corpus/ 2>/dev/null || true
	cd $(BUILD)/fuzz && ./fuzz_$(1) -max_total_time=$$(FUZZ_SECONDS) -max_len=$$(FUZZ_MAX_LEN) \
		$(1)-corpus
endef
$(foreach f,$(FUZZ_NAMES),$(eval $(call fuzz_rule,$(f))))

# Every target in turn, FUZZ_SECONDS each (make fuzz FUZZ_SECONDS=600); stops at the first crash.
.PHONY: fuzz
fuzz:
	@for n in $(FUZZ_NAMES); do $(MAKE) --no-print-directory fuzz-$$n || exit 1; done
