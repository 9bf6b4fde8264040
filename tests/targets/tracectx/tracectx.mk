# SPDX-License-Identifier: GPL-2.0-only
# Trace context targets (OTEP 4947, the OpenTelemetry thread-context proposal) for
# tests/unit/test_tracectx.c and the integration tests, built from tests/targets/tracectx/ into
# $(BUILD)/tctargets/:
#   tctx_exe     otel_thread_ctx_v1 in the executable (local-exec), exported in .dynsym
#   tctx_lib     otel_thread_ctx_v1 in libtctx.so, a TLSDESC library linked at start
#   tctx_lib_ie  the same in libtctx_ie.so, built initial-exec (a TPOFF64 GOT entry)
#   tctx_dlopen  libtctx.so loaded with dlopen after start (dynamic TLS when glibc's optional
#                static TLS is off)
#   tctx_elastic Elastic APM's correlation record from elastic-jvmti-linux-x86_64.so (TLSDESC)
#   tctx_go      Go pprof labels trace_id/span_id (Go's own linker: g at fs-8)
#   tctx_go_cgo  the same linked by the system linker (runtime.tlsg in the executable's PT_TLS)
#   tctx_go_stripped  the same with no .symtab nor DWARF (-s -w): offsets by Go version
TC_SRC := tests/targets/tracectx
TC_DIR := $(BUILD)/tctargets
# Frame pointers in leaves too and no sibling calls, like tests/targets/common/, so that the
# samplers see traced_spin and untraced_spin under their callers.
TC_CFLAGS := -O2 -g -D_GNU_SOURCE -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -fno-inline -Wall -Wextra -Werror
TC_TARGETS := $(addprefix $(TC_DIR)/,tctx_exe tctx_lib libtctx.so tctx_lib_ie libtctx_ie.so \
	tctx_dlopen tctx_elastic elastic-jvmti-linux-x86_64.so tctx_go tctx_go_cgo tctx_go_stripped)
# Like tests/unit/gosym.mk: GOPATH mode, standard library only, go's state under BUILD.
TC_GO_DIR = $(abspath $(BUILD))/tcgo
TC_GO_ENV = HOME=$(TC_GO_DIR)/home GOCACHE=$(TC_GO_DIR)/cache GOPATH=$(TC_GO_DIR)/path \
	GO111MODULE=off GOFLAGS=
TEST_TARGETS += $(TC_TARGETS)

$(TC_DIR)/tctx_exe: $(TC_SRC)/tctx_exe.c $(TC_SRC)/tctx_common.h
	@mkdir -p $(@D)
	clang $(TC_CFLAGS) -Wl,--export-dynamic-symbol=otel_thread_ctx_v1 $< -o $@ -lpthread

# gcc: clang 14 has no -mtls-dialect=gnu2.
$(TC_DIR)/libtctx.so: $(TC_SRC)/libtctx.c
	@mkdir -p $(@D)
	gcc $(filter-out -mno-omit-leaf-frame-pointer,$(TC_CFLAGS)) -fPIC -shared \
		-mtls-dialect=gnu2 $< -o $@

$(TC_DIR)/tctx_lib: $(TC_SRC)/tctx_lib.c $(TC_SRC)/tctx_common.h $(TC_DIR)/libtctx.so
	@mkdir -p $(@D)
	clang $(TC_CFLAGS) $< -o $@ -L$(TC_DIR) -ltctx -Wl,-rpath,'$$ORIGIN' -lpthread

$(TC_DIR)/libtctx_ie.so: $(TC_SRC)/libtctx.c
	@mkdir -p $(@D)
	gcc $(filter-out -mno-omit-leaf-frame-pointer,$(TC_CFLAGS)) -fPIC -shared \
		-ftls-model=initial-exec $< -o $@

$(TC_DIR)/tctx_lib_ie: $(TC_SRC)/tctx_lib.c $(TC_SRC)/tctx_common.h $(TC_DIR)/libtctx_ie.so
	@mkdir -p $(@D)
	clang $(TC_CFLAGS) $< -o $@ -L$(TC_DIR) -ltctx_ie -Wl,-rpath,'$$ORIGIN' -lpthread

$(TC_DIR)/tctx_dlopen: $(TC_SRC)/tctx_dlopen.c $(TC_SRC)/tctx_common.h $(TC_DIR)/libtctx.so
	@mkdir -p $(@D)
	clang $(TC_CFLAGS) $< -o $@ -ldl -lpthread

# The name is what Elastic's agent ships; the soname keeps DT_NEEDED free of the build path.
$(TC_DIR)/elastic-jvmti-linux-x86_64.so: $(TC_SRC)/libelastic.c
	@mkdir -p $(@D)
	gcc $(filter-out -mno-omit-leaf-frame-pointer,$(TC_CFLAGS)) -fPIC -shared \
		-mtls-dialect=gnu2 -Wl,-soname,elastic-jvmti-linux-x86_64.so $< -o $@

$(TC_DIR)/tctx_elastic: $(TC_SRC)/tctx_elastic.c $(TC_SRC)/tctx_common.h \
		$(TC_DIR)/elastic-jvmti-linux-x86_64.so
	@mkdir -p $(@D)
	clang $(TC_CFLAGS) $< -o $@ $(TC_DIR)/elastic-jvmti-linux-x86_64.so \
		-Wl,-rpath,'$$ORIGIN' -lpthread

$(TC_DIR)/tctx_go: $(TC_SRC)/golabels/main.go
	@mkdir -p $(@D) $(TC_GO_DIR)/home
	env $(TC_GO_ENV) CGO_ENABLED=0 go build -o $@ $<

$(TC_DIR)/tctx_go_stripped: $(TC_SRC)/golabels/main.go
	@mkdir -p $(@D) $(TC_GO_DIR)/home
	env $(TC_GO_ENV) CGO_ENABLED=0 go build -ldflags='-s -w' -o $@ $<

$(TC_DIR)/tctx_go_cgo: $(TC_SRC)/golabels/main.go
	@mkdir -p $(@D) $(TC_GO_DIR)/home
	env $(TC_GO_ENV) CGO_ENABLED=1 CC=gcc go build -ldflags='-linkmode=external' -o $@ $<
