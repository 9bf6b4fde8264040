# SPDX-License-Identifier: GPL-2.0-only
# Targets of tests/integration/test_memory.py besides tests/targets/common/mem_leak.c. mem_mmap
# (anonymous mappings) is built like common's into $(BUILD)/targets/, the rest into
# $(BUILD)/memtargets/:
#   mem_leak_go      the same leak and churn in Go (profiled through the runtime's sampled path)
#   mem_leak_linked  mem_leak.c with the preload shim linked in (no LD_PRELOAD)
#   mem_leak_jemalloc, mem_leak_mimalloc
#                    the same linked with another allocator's shared library (libjemalloc-dev,
#                    libmimalloc-dev: scripts/install-deps.sh), which defines malloc before libc
#   mem_leak_cxx     mem_leak.c built as C++: new[] and delete[]
#   mem_leak_rs      the same in Rust on its default allocator (built where rustc is: the
#                    machine's, on PATH or rustup's; its test skips without it)
#   mem_leak_jemalloc_static, mem_leak_tcmalloc_static
#                    the same with the allocator's archive (tcmalloc's: libgoogle-perftools-dev):
#                    malloc in the executable itself
MEM_SRC := tests/targets/memory
MEM_DIR := $(BUILD)/memtargets
# Like tests/targets/tracectx/tracectx.mk: GOPATH mode, standard library only, go's state under
# BUILD.
MEM_GO_DIR = $(abspath $(BUILD))/memgo
MEM_GO_ENV = HOME=$(MEM_GO_DIR)/home GOCACHE=$(MEM_GO_DIR)/cache GOPATH=$(MEM_GO_DIR)/path \
	GO111MODULE=off GOFLAGS=
TARGET_SRCS += $(wildcard $(MEM_SRC)/*.c)
TEST_TARGETS += $(patsubst $(MEM_SRC)/%.c,$(BUILD)/targets/%,$(wildcard $(MEM_SRC)/*.c))

$(BUILD)/targets/%: $(MEM_SRC)/%.c tests/targets/common/target.h
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -Itests/targets/common $< -o $@ -lpthread

TEST_TARGETS += $(MEM_DIR)/mem_leak_go $(MEM_DIR)/mem_leak_linked
# Each allocator: the libraries its link needs (an archive by its path, so that it is linked
# statically whatever shared library sits beside it; looked up only when built).
MEM_ALLOC_LIBS_jemalloc := -ljemalloc
MEM_ALLOC_LIBS_mimalloc := -lmimalloc
MEM_ALLOC_LIBS_jemalloc_static = $(shell $(TARGET_CC) -print-file-name=libjemalloc.a) -lpthread -lm
MEM_ALLOC_LIBS_tcmalloc_static = $(shell $(TARGET_CC) -print-file-name=libtcmalloc_minimal.a) \
	-lpthread -lstdc++ -lm
MEM_ALLOCATORS := jemalloc mimalloc jemalloc_static tcmalloc_static
TEST_TARGETS += $(patsubst %,$(MEM_DIR)/mem_leak_%,$(MEM_ALLOCATORS))

$(patsubst %,$(MEM_DIR)/mem_leak_%,$(MEM_ALLOCATORS)): $(MEM_DIR)/mem_leak_%: \
		tests/targets/common/mem_leak.c tests/targets/common/target.h
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) $< -o $@ $(MEM_ALLOC_LIBS_$*)

TEST_TARGETS += $(MEM_DIR)/mem_leak_cxx
$(MEM_DIR)/mem_leak_cxx: tests/targets/common/mem_leak.c tests/targets/common/target.h
	@mkdir -p $(@D)
	$(TARGET_CC) -x c++ $(TARGET_CFLAGS) $< -o $@ -lstdc++

MEM_RUSTC := $(firstword $(shell command -v rustc 2>/dev/null) $(wildcard $(HOME)/.cargo/bin/rustc))
ifneq ($(MEM_RUSTC),)
TEST_TARGETS += $(MEM_DIR)/mem_leak_rs
endif
$(MEM_DIR)/mem_leak_rs: $(MEM_SRC)/mem_leak_rs.rs
	@mkdir -p $(@D)
	$(MEM_RUSTC) --edition 2021 -O -g -C force-frame-pointers=yes -o $@ $<

$(MEM_DIR)/mem_leak_linked: tests/targets/common/mem_leak.c tests/targets/common/target.h \
			    $(BUILD)/libautoprof_preload.a
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) $< $(BUILD)/libautoprof_preload.a -o $@ $(PRELOAD_LDLIBS) \
		-Wl,--export-dynamic-symbol='autoprof_preload_*'

$(MEM_DIR)/mem_leak_go: $(MEM_SRC)/mem_leak_go.go
	@mkdir -p $(@D) $(MEM_GO_DIR)/home
	env $(MEM_GO_ENV) CGO_ENABLED=0 go build -o $@ $<
