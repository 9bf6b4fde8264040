/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_LUA_PROCS_BPF_H
#define AUTOPROF_LUA_PROCS_BPF_H

/*
 * pid -> the offsets of its Lua release (bpf/lua_abi.h). User space fills it (src/runtime/lua.c);
 * bpf/proc.bpf.c owns it and clears a pid at exec and exit, as for python_procs. Grows with use:
 * nothing without a Lua process.
 */
#include "lua_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct lua_proc_entry);
} lua_procs SEC(".maps");

/*
 * thread id -> the lua_State it last ran, as found in its registers: a sample that struck code
 * holding no state in a register (libc, the kernel) uses it, checked again first. Its entry
 * goes at the thread's exit (bpf/proc.bpf.c); with the map full such samples go without.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} lua_threads SEC(".maps");

#endif
