# SPDX-License-Identifier: GPL-2.0-only
# Go fixtures for tests/unit/test_gosym.c, built from tests/fixtures/gohello/main.go: a plain
# build, one stripped of .symtab and DWARF (-s -w) and a PIE (its table in .data.rel.ro.gopclntab).
GO ?= go
GOSYM_FIXTURE_DIR := $(BUILD)/fixtures
GOSYM_FIXTURES := $(addprefix $(GOSYM_FIXTURE_DIR)/,gohello gohello-stripped gohello-pie)
TEST_FIXTURES += $(GOSYM_FIXTURES)

# CI runs with a clean HOME: go gets its home, build cache and GOPATH under BUILD. GOPATH mode
# and standard library only, so nothing is downloaded; no cgo, so no C toolchain is involved.
GOSYM_GO_DIR = $(abspath $(BUILD))/go
GOSYM_GO_ENV = HOME=$(GOSYM_GO_DIR)/home GOCACHE=$(GOSYM_GO_DIR)/cache GOPATH=$(GOSYM_GO_DIR)/path \
	GO111MODULE=off GOFLAGS= CGO_ENABLED=0

$(GOSYM_FIXTURE_DIR)/gohello: tests/fixtures/gohello/main.go
	@mkdir -p $(@D) $(GOSYM_GO_DIR)/home
	env $(GOSYM_GO_ENV) $(GO) build -o $@ $<

$(GOSYM_FIXTURE_DIR)/gohello-stripped: tests/fixtures/gohello/main.go
	@mkdir -p $(@D) $(GOSYM_GO_DIR)/home
	env $(GOSYM_GO_ENV) $(GO) build -ldflags='-s -w' -o $@ $<

$(GOSYM_FIXTURE_DIR)/gohello-pie: tests/fixtures/gohello/main.go
	@mkdir -p $(@D) $(GOSYM_GO_DIR)/home
	env $(GOSYM_GO_ENV) $(GO) build -buildmode=pie -o $@ $<
