/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef AUTOPROF_RUNTIME_LUA_H
#define AUTOPROF_RUNTIME_LUA_H

/*
 * Lua frames: PUC Lua 5.1, 5.3, 5.4 and LuaJIT 2.1. A process one of whose mapped files
 * exports lua_ident (PUC's interpreter, static or shared, stripped to .dynsym or not) is Lua of
 * the release lua_ident names, one that exports luaJIT_profile_start LuaJIT 2.1: its row of
 * struct offsets goes into the BPF map lua_procs, and the sampler walks the running state's
 * calls (bpf/lua.bpf.h: PUC's CallInfo chain, LuaJIT's frames on its stack), sending (Proto,
 * pc) pairs for Lua functions and (LUA_FRAME_C, address) where C code called into Lua. Here
 * the Protos are named from the process's memory (chunk, line from the line table, the
 * function's name from its source line) and placed among the native frames: each run of the
 * interpreter's own frames that a C-to-Lua entry (lua_pcall, lua_call, lua_resume...) began is
 * replaced by the Lua functions it ran. Releases without offsets (5.2, LuaJIT 2.0) keep their
 * native frames and are counted.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/frame.h"

struct collect_ctx;
struct proctab;
struct lua;

/* ctx's lua_fd, symbolizer and unwinder are used; NULL with errno set. */
struct lua *lua__new(struct collect_ctx *ctx);
void lua__free(struct lua *lua); /* accepts NULL */

/*
 * Listens to processes' lives (proc/proctab.h): once per version of a process's mappings it
 * learns whether it runs Lua, which release, and tells the samplers' BPF; an exec or exit
 * forgets it. lua may be NULL (Lua frames off): then nothing is registered.
 */
int lua__observe(struct lua *lua, struct proctab *pt);
/* Forgets processes that are gone without their exit seen (a full ring buffer). */
void lua__sweep(struct lua *lua);

/* Whether a sample's interpreter pairs[0, 2 * np) are Lua's (they begin with LUA_FRAMES_MAGIC). */
bool lua__pairs(const uint64_t *pairs, uint32_t np);

/*
 * The user frames user[0, n) (leaf first) with the interpreter's frames replaced by the Lua
 * functions they ran, from the sample's pairs[0, 2 * np), into out (room for cap). Frames that
 * cannot be named leave the native ones in place. *truncated: the native walk stopped short,
 * and Lua frames of entries it did not reach follow the native ones; set when the native
 * frames hold no C-to-Lua entry at all (they must be short). addrs[0, n): the native frames'
 * addresses as walked (NULL: not known), where LuaJIT's VM entries return. Returns the frames
 * written.
 */
uint32_t lua__splice(struct lua *lua, uint32_t pid, const struct frame *user, const uint64_t *addrs,
		     uint32_t n, bool *truncated, const uint64_t *pairs, uint32_t np,
		     struct frame *out, uint32_t cap);

struct lua_stats {
	uint64_t supported;	  /* processes walked: a release with offsets */
	uint64_t unknown_version; /* Lua without offsets (5.2, LuaJIT 2.0): native frames only */
	uint64_t errors;	  /* Lua whose file could not be read */
	uint64_t samples;	  /* samples with Lua frames */
	uint64_t frames;	  /* Lua frames named */
	uint64_t proto_errors;	  /* functions that could not be read (their frames dropped) */
	uint64_t mismatches;	  /* samples with more Lua segments than native entries (>0) */
	uint64_t short_walks;	  /* samples whose native frames held no entry: marked truncated */
	uint64_t cut_walks;	  /* samples whose Lua walk stopped short: marked truncated */
};
void lua__stats(struct lua *lua, struct lua_stats *out);

/* --- naming one function (src/runtime/luaproto.c) --------------------------------------- */

/* Reads n bytes of the process at addr: 0 or a negative errno. */
typedef int (*lua_read_fn)(void *ctx, uint64_t addr, void *buf, size_t n);

struct lua_func {
	char *chunk;	       /* the chunk's name: a file's path, "=stdin", a string's start */
	bool is_file;	       /* chunk is a file's path ("@path") */
	uint32_t line_defined; /* 0: the main chunk */
	uint32_t last_line;    /* lastlinedefined */
	uint64_t code;	       /* address of its first instruction */
	uint32_t nr_lines;     /* entries of lines[] (instructions with a line) */
	int32_t *lines;	       /* line of each instruction */
	char *name;	       /* its name, once known (malloc'd), else NULL */
};

/*
 * The Proto at addr of Lua release version (0x0501, 0x0503, 0x0504, LUA_VERSION_LUAJIT; for
 * LuaJIT a GCproto) read through read(ctx),
 * into *f (its strings and lines malloc'd: lua_func__clear frees them). 0, -ENOTSUP (a release
 * without offsets), -EIO (unreadable) or -EINVAL (not a function's prototype).
 */
int lua_func__read(uint32_t version, lua_read_fn read, void *ctx, uint64_t addr,
		   struct lua_func *f);
void lua_func__clear(struct lua_func *f);
/* The line of the instruction before pc (a saved pc points past the one running). */
uint32_t lua_func__line(const struct lua_func *f, uint64_t pc);
/*
 * The name a function's definition gives it in its source line text (`local function hot(`,
 * `function M.f(`, `obj:m(`, `x = function(`), copied into out (cap bytes): false when the line
 * names none.
 */
bool lua__name_from_source(const char *line, char *out, size_t cap);
/* The offsets row of version into the BPF value *out: false when the release has none. */
struct lua_proc;
bool lua__offsets(uint32_t version, struct lua_proc *out);

#endif
