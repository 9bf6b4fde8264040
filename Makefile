# SPDX-License-Identifier: GPL-2.0-only
#
# make            build build/autoprof
# make run        install what is missing, build, run with config/autoprof.yaml
# make test       install what is missing, build, run every test (unit + integration)
# make bench      run bench/*.sh
# BUILD=dir       put every output under dir instead of build/
# WEBUI=0|1       leave out / require the web view (default: built when npm is installed or
#                 web/node_modules is there; needs the npm registry once, then works offline)

BUILD ?= build
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

CFLAGS ?= -O2 -g
# Frame pointers everywhere: autoprof profiles itself like any other process.
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer \
	  -I. -I$(BUILD) -I$(BUILD)/gen -Isrc \
	  -DAUTOPROF_VERSION='"$(VERSION)"' -DAUTOPROF_COMMIT='"$(GIT_COMMIT)"'
# Hardening (user space only; BPF objects are built with their own flags): stack protector,
# fortified libc calls (they need -O2), a position-independent executable, and full RELRO
# (every relocation resolved at start, then the GOT read-only).
HARDEN_CFLAGS := -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIE
HARDEN_LDFLAGS := -pie -Wl,-z,relro,-z,now
CFLAGS += $(HARDEN_CFLAGS)
LDFLAGS += $(HARDEN_LDFLAGS)
LDLIBS := -lbpf -lelf -ldw -lz -lmicrohttpd -lyaml -ljansson -lprotobuf-c -lpthread -llzma -liberty \
	  -lgnutls -lcrypt -lcap -lm
# The multiarch include directory last: libbpf's usdt.bpf.h includes <linux/errno.h>, whose
# <asm/errno.h> lives there (as libbpf-bootstrap adds clang's system directories).
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I$(BUILD) -Ibpf \
	$(addprefix -idirafter ,$(wildcard /usr/include/$(shell $(CC) -dumpmachine)))

BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.skel.h,$(BPF_SRCS))
PROTOS := $(shell find otlp -name '*.proto' 2>/dev/null)
GEN_SRCS := $(patsubst otlp/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTOS))
SRCS := $(shell find src -name '*.c')
ASM_SRCS := $(shell find src -name '*.S')
OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SRCS)) $(patsubst %.S,$(BUILD)/obj/%.o,$(ASM_SRCS)) \
	$(GEN_SRCS:.c=.o)
LIB_OBJS := $(filter-out $(BUILD)/obj/src/daemon/main.o,$(OBJS))

# Generated sources are intermediate to make: keep them, they are slow to redo.
.SECONDARY: $(GEN_SRCS) $(GEN_SRCS:.c=.h) $(SKELS) $(patsubst %.skel.h,%.bpf.o,$(SKELS))

.PHONY: all run test unit integration bench deps clean format
all: $(BUILD)/autoprof $(BUILD)/libautoprof_preload.so $(BUILD)/libautoprof_preload.a

deps:
	@bash scripts/install-deps.sh

$(BUILD)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: otlp/%.proto
	@mkdir -p $(BUILD)/gen
	$(PROTOC_C) --proto_path=otlp --c_out=$(BUILD)/gen $<

$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c | $(GEN_SRCS)
	$(CC) $(filter-out -Werror,$(CFLAGS)) -c $< -o $@

# Every object may include a skeleton or a generated header: build those first.
$(BUILD)/obj/%.o: %.c | $(SKELS) $(GEN_SRCS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# Objects that embed the version or commit are rebuilt when either changes, and only those.
VERSION_STAMP := $(BUILD)/version.stamp
$(VERSION_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION) $(GIT_COMMIT)' | cmp -s - $@ || echo '$(VERSION) $(GIT_COMMIT)' > $@
$(patsubst %.c,$(BUILD)/obj/%.o,$(shell grep -rl 'AUTOPROF_\(VERSION\|COMMIT\)' src tests/unit)): \
	$(VERSION_STAMP)
.PHONY: FORCE

# The web view (web/): npm ci installs the pinned packages into web/node_modules (kept by
# make clean, so later builds need no network), esbuild bundles web/src into one HTML page, and
# src/http/webui_page.S links that page into the binary with .incbin.
NPM ?= npm
NODE ?= node
WEBUI ?= $(if $(or $(wildcard web/node_modules/.package-lock.json),$(shell command -v $(NPM))),1,0)
WEBUI_PAGE := $(BUILD)/web/index.html
WEBUI_STAMP := $(BUILD)/web/webui.stamp
WEBUI_OBJ := $(BUILD)/obj/src/http/webui_page.o
$(WEBUI_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(WEBUI)' | cmp -s - $@ || echo '$(WEBUI)' > $@

web/node_modules/.package-lock.json: web/package.json web/package-lock.json
	cd web && $(NPM) ci --no-audit --no-fund || { echo "npm ci failed (is the npm registry" \
		"reachable?); make WEBUI=0 builds autoprof without the web view" >&2; exit 1; }
	@touch $@

$(WEBUI_PAGE): web/node_modules/.package-lock.json web/build.mjs $(wildcard web/src/*)
	@mkdir -p $(@D)
	cd web && $(NODE) build.mjs $(abspath $@)

ifeq ($(WEBUI),1)
$(WEBUI_OBJ): $(WEBUI_PAGE)
$(WEBUI_OBJ): ASFLAGS_WEBUI := -DWEBUI_PAGE='"$(abspath $(WEBUI_PAGE))"'
endif
$(BUILD)/obj/%.o: %.S $(WEBUI_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ASFLAGS_WEBUI) -c $< -o $@

$(BUILD)/autoprof: $(OBJS)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# Memory profiling's preload shim (preload/autoprof_preload.c): LD_PRELOAD=.../this.so app.
# Only its interposed functions and markers are exported.
PRELOAD_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC \
	-fvisibility=hidden -fno-omit-frame-pointer -fstack-protector-strong -D_FORTIFY_SOURCE=2
PRELOAD_LDLIBS := -ldl -lm -lpthread
$(BUILD)/libautoprof_preload.so: preload/autoprof_preload.c preload/autoprof_preload.h
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -shared -Wl,-soname,libautoprof_preload.so -Wl,-z,relro,-z,now $< \
		-o $@ $(PRELOAD_LDLIBS)

# The same shim as an archive a program links instead (cc ... libautoprof_preload.a -ldl -lm
# -lpthread): the program's own calls of malloc and free then reach it directly, not through
# the extra jump an interposed library costs every call (see docs/benchmarks.md).
$(BUILD)/libautoprof_preload.a: preload/autoprof_preload.c preload/autoprof_preload.h
	@mkdir -p $(BUILD)/obj/preload
	$(CC) $(PRELOAD_CFLAGS) -c $< -o $(BUILD)/obj/preload/autoprof_preload.o
	rm -f $@ && $(AR) rcs $@ $(BUILD)/obj/preload/autoprof_preload.o

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# Unit tests: tests/unit/test_X.c names the sources it links in a comment line
#   /* DEPS: src/lib/buf.c src/lib/strtab.c gen/pprof/profile.pb-c.c */
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
deps_of = $(shell sed -n 's@^.*DEPS:\(.*\)\*/.*$$@\1@p' $(1))
dep_objs = $(patsubst gen/%.c,$(BUILD)/gen/%.o,$(filter gen/%,$(call deps_of,$(1)))) \
	$(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out gen/%,$(call deps_of,$(1))))
define unit_rule
$(BUILD)/tests/unit/$(1): $(BUILD)/obj/tests/unit/$(1).o $(call dep_objs,tests/unit/$(1).c)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) $$^ -o $$@ $$(LDLIBS)
endef
$(foreach t,$(patsubst tests/unit/%.c,%,$(UNIT_SRCS)),$(eval $(call unit_rule,$(t))))

# Fragments beside what they build: unit test fixtures (tests/unit/*.mk), integration test
# targets (tests/targets/SUITE/*.mk), benchmark drivers (bench/*.mk), fuzz targets (fuzz/*.mk).
-include $(wildcard tests/unit/*.mk tests/targets/*/*.mk bench/*.mk fuzz/*.mk)

unit: $(UNIT_BINS) $(TEST_FIXTURES)
	@BUILD=$(BUILD) bash tests/run.sh unit

integration: $(BUILD)/autoprof $(TEST_TARGETS)
	@BUILD=$(BUILD) bash tests/run.sh integration

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS) $(TEST_FIXTURES) $(TEST_TARGETS)
	@BUILD=$(BUILD) bash tests/run.sh all

run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/autoprof --config.file=config/autoprof.yaml

bench: deps all $(TEST_TARGETS)
	@for b in bench/*.sh; do bash $$b || exit 1; done

format:
	clang-format -i $(SRCS) $(wildcard bpf/*.c bpf/*.h tests/unit/*.c) $(TARGET_SRCS)

clean:
	rm -rf $(BUILD)
