# SPDX-License-Identifier: GPL-2.0-only
# GPU memory profiling targets, for machines without a GPU, built from tests/targets/gpu/ into
# $(BUILD)/gputargets/:
#   lib/libcuda.so.1     stand-in for the CUDA driver (cuda_standin.c): the real exported names
#                        and signatures, host memory for device memory
#   lib/libcudart.so.12  stand-in for the CUDA runtime (cudart_standin.c): not linked with
#                        libcuda, it dlopens libcuda.so.1 beside it ($ORIGIN) at first use and
#                        calls the driver through cuGetProcAddress, like the real one
#   gpu_alloc            one function per way to allocate, then a JSON line of the truth
#   lib/libc10_cuda.so   stand-in for PyTorch's caching allocator (c10_standin.c): tensors in
#                        2 MiB cudaMalloc segments, USDT probes pytorch:malloc/free
#   gpu_bench            N cudaMalloc+cudaFree (or cuMemAlloc_v2+cuMemFree_v2) pairs, timed
# tests/targets/gpu/gpu_alloc.py is the Python variant (it loads lib/libcudart.so.12 by path).
GPU_SRC := tests/targets/gpu
GPU_DIR := $(BUILD)/gputargets
GPU_LIB := $(GPU_DIR)/lib
# clang, for frame pointers in leaves (GCC 12 ignores -mno-omit-leaf-frame-pointer); -O1 with
# no inlining and no sibling calls, so that every named function is a frame of its own and a
# runtime function's call to the driver stays a call.
GPU_CFLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -fno-inline -Wall -Wextra -Werror -Wl,--build-id
# The stand-ins: every exported function in .dynsym, and no undefined symbol left for the
# program to supply (the runtime's driver calls go through cuGetProcAddress, never the linker).
GPU_LIB_CFLAGS := $(GPU_CFLAGS) -fPIC -shared -fvisibility=default -Wl,--no-undefined
GPU_HDR := $(GPU_SRC)/cuda_api.h
GPU_LIBS := $(GPU_LIB)/libcuda.so.1 $(GPU_LIB)/libcudart.so.12
GPU_LDLIBS := -L$(GPU_LIB) -l:libcudart.so.12 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/lib' -lpthread
TARGET_SRCS += $(wildcard $(GPU_SRC)/*.c)
TEST_TARGETS += $(GPU_LIBS) $(GPU_DIR)/gpu_alloc $(GPU_DIR)/gpu_bench $(GPU_LIB)/libc10_cuda.so

$(GPU_LIB)/libcuda.so.1: $(GPU_SRC)/cuda_standin.c $(GPU_HDR)
	@mkdir -p $(@D)
	clang $(GPU_LIB_CFLAGS) -Wl,-soname,libcuda.so.1 $< -o $@ -lpthread

$(GPU_LIB)/libcudart.so.12: $(GPU_SRC)/cudart_standin.c $(GPU_HDR)
	@mkdir -p $(@D)
	clang $(GPU_LIB_CFLAGS) -Wl,-soname,libcudart.so.12 -Wl,-rpath,'$$ORIGIN' $< -o $@ \
		-ldl -lpthread

# PyTorch's allocator: USDT probes from <sys/sdt.h> (systemtap-sdt-dev), over the runtime.
$(GPU_LIB)/libc10_cuda.so: $(GPU_SRC)/c10_standin.c $(GPU_HDR) $(GPU_LIB)/libcudart.so.12
	@mkdir -p $(@D)
	clang $(GPU_LIB_CFLAGS) -Wl,-soname,libc10_cuda.so -Wl,-rpath,'$$ORIGIN' $< -o $@ \
		-L$(GPU_LIB) -l:libcudart.so.12 -lpthread

$(GPU_DIR)/gpu_alloc: $(GPU_SRC)/gpu_alloc.c $(GPU_HDR) tests/targets/common/target.h $(GPU_LIBS)
	@mkdir -p $(@D)
	clang $(GPU_CFLAGS) -Itests/targets/common $< -o $@ $(GPU_LDLIBS)

$(GPU_DIR)/gpu_bench: $(GPU_SRC)/gpu_bench.c $(GPU_HDR) $(GPU_LIBS) $(GPU_LIB)/libc10_cuda.so
	@mkdir -p $(@D)
	clang $(GPU_CFLAGS) $< -o $@ $(GPU_LDLIBS) -ldl
