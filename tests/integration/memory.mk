# SPDX-License-Identifier: GPL-2.0-only
# Memory profiling targets besides tests/targets/mem_leak.c, built into $(BUILD)/memtargets/:
#   mem_leak_go      the same leak and churn in Go (profiled through the runtime's sampled path)
#   mem_leak_linked  tests/targets/mem_leak.c with the preload shim linked in (no LD_PRELOAD)
MEM_SRC := tests/integration/memtargets
MEM_DIR := $(BUILD)/memtargets
# Like tests/integration/tracectx.mk: GOPATH mode, standard library only, go's state under BUILD.
MEM_GO_DIR = $(abspath $(BUILD))/memgo
MEM_GO_ENV = HOME=$(MEM_GO_DIR)/home GOCACHE=$(MEM_GO_DIR)/cache GOPATH=$(MEM_GO_DIR)/path \
	GO111MODULE=off GOFLAGS=
TEST_TARGETS += $(MEM_DIR)/mem_leak_go $(MEM_DIR)/mem_leak_linked

$(MEM_DIR)/mem_leak_linked: tests/targets/mem_leak.c tests/targets/target.h \
			    $(BUILD)/libautoprof_preload.a
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) $< $(BUILD)/libautoprof_preload.a -o $@ $(PRELOAD_LDLIBS) \
		-Wl,--export-dynamic-symbol='autoprof_preload_*'

$(MEM_DIR)/mem_leak_go: $(MEM_SRC)/mem_leak_go.go
	@mkdir -p $(@D) $(MEM_GO_DIR)/home
	env $(MEM_GO_ENV) CGO_ENABLED=0 go build -o $@ $<
