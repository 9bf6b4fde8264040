# SPDX-License-Identifier: GPL-2.0-only
# Benchmark drivers (bench/*.c), built on demand by bench/*.sh; not tests, so not in TEST_TARGETS.
# bench/symbolize_tool: addr2line-style front end to autoprof's symbolizer (objsym).
BENCH_SYMBOLIZE_SRCS := src/symbolize/objsym.c src/symbolize/elf.c src/symbolize/dwarf.c src/symbolize/dwarf_cu.c \
	src/symbolize/gosym.c src/symbolize/debuginfo.c src/symbolize/demangle.c \
	src/lib/log.c src/lib/strtab.c src/lib/array.c src/lib/ufile.c src/lib/procfs.c bench/symbolize_tool.c
BENCH_SYMBOLIZE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(BENCH_SYMBOLIZE_SRCS))

$(BUILD)/bench/symbolize_tool: $(BENCH_SYMBOLIZE_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# bench/symbolize_templates: a template-heavy C++ program with full debug info to symbolize
# (about a minute to build, once).
$(BUILD)/bench/symbolize_templates: bench/symbolize_templates.cc
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $< -o $@

# bench/malloc_loop: the allocation-heavy loop bench/memory.sh runs under each profiler.
$(BUILD)/bench/malloc_loop: bench/malloc_loop.c bench/loop.h
	@mkdir -p $(@D)
	$(CC) -O2 -g $< -o $@

# bench/malloc_loop_linked: the same loop with the preload shim linked in.
$(BUILD)/bench/malloc_loop_linked: bench/malloc_loop.c bench/loop.h $(BUILD)/libautoprof_preload.a
	@mkdir -p $(@D)
	$(CC) -O2 -g $< $(BUILD)/libautoprof_preload.a -o $@ $(PRELOAD_LDLIBS)

# bench/libpassthrough.so: malloc and free forwarded, nothing else (the floor of any shim).
$(BUILD)/bench/libpassthrough.so: bench/passthrough.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden $< -o $@ -ldl

# bench/call_loop: the loop of calls bench/probes.sh times bare, under funclatency and autoprof.
$(BUILD)/bench/call_loop: bench/call_loop.c bench/loop.h
	@mkdir -p $(@D)
	$(CC) -O2 -g $< -o $@

# bench/maplat_tool: cold and warm BPF map lookups at cpu-clock samples, by map layout
# (bench/maplat.sh). Its BPF object lives in bench/, so it has its own skeleton rule.
$(BUILD)/bench/maplat.bpf.o: bench/maplat.bpf.c bench/maplat.h $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -Ibench -c $< -o $@

$(BUILD)/bench/maplat.skel.h: $(BUILD)/bench/maplat.bpf.o
	$(BPFTOOL) gen skeleton $< name maplat_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/bench/maplat_tool: bench/maplat_tool.c bench/maplat.h $(BUILD)/bench/maplat.skel.h
	$(CC) -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I$(BUILD)/bench -Ibench $< -o $@ -lbpf

# bench/spawn_loop: exec churn (posix_spawn round-robin) for bench/churn.sh.
$(BUILD)/bench/spawn_loop: bench/spawn_loop.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror $< -o $@
