# SPDX-License-Identifier: GPL-2.0-only
# Targets for tests/integration/test_gounwind.py, built into $(BUILD)/gotargets/ from
# tests/targets/gounwind/gospin by each Go toolchain installed of GU_GO_VERSIONS (Debian's
# go is 1.19; 1.22 and 1.23 come from bookworm-backports): gospin-V and gospin-V-stripped
# (-s -w: no .symtab nor DWARF), and from tests/targets/gounwind/gocgo gocgo-V and
# gocgo-V-stripped (cgo both ways, linked by the system linker). A toolchain not installed
# builds nothing (its tests skip). The build fails if main.spin gets a frame: a frameless leaf
# is what the test is about.
GU_SRC := tests/targets/gounwind/gospin/main.go
GU_CGO := tests/targets/gounwind/gocgo
GU_DIR := $(BUILD)/gotargets
GU_GO_VERSIONS := 1.19 1.22 1.23
GU_GO_DIR = $(abspath $(BUILD))/gugo
GU_GO_ENV = HOME=$(GU_GO_DIR)/home GOCACHE=$(GU_GO_DIR)/cache-$* GOPATH=$(GU_GO_DIR)/path \
	GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local CGO_ENABLED=0
GU_TARGETS := $(foreach v,$(GU_GO_VERSIONS),$(GU_DIR)/gospin-$(v).stamp)
TEST_TARGETS += $(GU_TARGETS)

$(GU_DIR)/gospin-%.stamp: $(GU_SRC) $(GU_CGO)/main.go $(GU_CGO)/c.c \
		tests/targets/gounwind/gounwind.mk
	@mkdir -p $(@D) $(GU_GO_DIR)/home
	@rm -f $(GU_DIR)/gospin-$* $(GU_DIR)/gospin-$*-stripped $(GU_DIR)/gocgo-$* \
		$(GU_DIR)/gocgo-$*-stripped
	set -e; go=/usr/lib/go-$*/bin/go; \
	if [ -x $$go ]; then \
		env $(GU_GO_ENV) $$go build -o $(GU_DIR)/gospin-$* $<; \
		env $(GU_GO_ENV) $$go build -ldflags='-s -w' -o $(GU_DIR)/gospin-$*-stripped $<; \
		if env $(GU_GO_ENV) $$go tool objdump -s '^main\.spin$$' $(GU_DIR)/gospin-$* | \
			grep -q 'BP'; then \
			echo "main.spin has a frame in gospin-$*"; exit 1; fi; \
		env $(GU_GO_ENV) CGO_ENABLED=1 CC=gcc $$go build -o $(GU_DIR)/gocgo-$* ./$(GU_CGO); \
		env $(GU_GO_ENV) CGO_ENABLED=1 CC=gcc $$go build -ldflags='-s -w' \
			-o $(GU_DIR)/gocgo-$*-stripped ./$(GU_CGO); \
	fi
	@touch $@
