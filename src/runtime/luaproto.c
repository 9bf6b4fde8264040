// SPDX-License-Identifier: GPL-2.0-only
/*
 * What one Lua function's prototype says: its chunk, where it was defined, the line of each
 * instruction. Read from another process's memory, so every size and pointer is checked before
 * it is used, and nothing read is trusted to be a string's end.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/lua_abi.h"
#include "runtime/lua.h"

#define NO LUA_NO_FIELD
/* Longest chunk name kept, and line table read: what sizes read from the process may make us
 * allocate. */
#define MAX_CHUNK 512
#define MAX_LINES (1u << 20)

enum lines_kind {
	LINES_INT,    /* 5.1, 5.3: int lineinfo[sizelineinfo], one line per instruction */
	LINES_DELTA,  /* 5.4: signed byte deltas, with absolute lines every so often */
	LINES_LUAJIT, /* LuaJIT: offsets from firstline, 1, 2 or 4 bytes as numline needs */
};

/*
 * x86-64 offsets of each release's structures (lstate.h, lobject.h of Lua 5.1.5, 5.3.6 and
 * 5.4.4; a minor release keeps its layouts). tests/unit/test_lua.c checks them against the
 * answers of lua_getinfo in interpreters linked to each release's library.
 */
struct luaver {
	uint16_t version;
	struct lua_proc bpf;
	/* Proto */
	uint16_t p_size; /* bytes read: up to its last field used */
	uint16_t p_source, p_linedefined, p_lastlinedefined, p_code, p_sizecode;
	uint16_t p_lineinfo, p_sizelineinfo, p_abslineinfo, p_sizeabslineinfo;
	enum lines_kind lines;
	/* TString: the header's tt, a short string's length byte (NO: a size_t at ts_len). */
	uint16_t ts_shrlen, ts_len, ts_contents;
	uint8_t tag_shrstr, tag_lngstr;
};

static const struct luaver versions[] = {
    {.version = 0x0501,
     .bpf = {.flags = LUA_PROC_CI_ARRAY,
	     .l_status = 10,
	     .l_top = 16,
	     .l_g = 32,
	     .l_ci = 40,
	     .l_stack_last = 56,
	     .l_stack = 64,
	     .l_base_ci = 80,
	     .l_savedpc = 48,
	     .g_mainthread = 176,
	     .ci_func = 8,
	     .ci_previous = NO,
	     .ci_savedpc = 24,
	     .ci_size = 40,
	     .cl_isc = 10,
	     .cl_proto = 32,
	     .cl_cfunc = 32,
	     .tag_lua = 6, /* LUA_TFUNCTION: isC tells */
	     .tag_off = 8,
	     .tag_thread = 8}, /* LUA_TTHREAD */
     .p_size = 104,
     .p_source = 64,
     .p_linedefined = 96,
     .p_lastlinedefined = 100,
     .p_code = 24,
     .p_sizecode = 80,
     .p_lineinfo = 40,
     .p_sizelineinfo = 84,
     .p_abslineinfo = NO,
     .p_sizeabslineinfo = NO,
     .lines = LINES_INT,
     .ts_shrlen = NO,
     .ts_len = 16,
     .ts_contents = 24,
     .tag_shrstr = 4,
     .tag_lngstr = 4},
    {.version = 0x0503,
     .bpf = {.l_status = 12,
	     .l_top = 16,
	     .l_g = 24,
	     .l_ci = 32,
	     .l_stack_last = 48,
	     .l_stack = 56,
	     .l_base_ci = 96,
	     .l_savedpc = NO,
	     .g_mainthread = 200,
	     .ci_func = 0,
	     .ci_previous = 16,
	     .ci_savedpc = 40,
	     .ci_size = 72,
	     .cl_isc = NO,
	     .cl_proto = 24,
	     .cl_cfunc = 24,
	     .tag_lua = 0x46,	   /* ctb(LUA_TLCL) */
	     .tag_cclosure = 0x66, /* ctb(LUA_TCCL) */
	     .tag_light = 0x16,	   /* LUA_TLCF */
	     .tag_off = 8,
	     .tag_thread = 8},
     .p_size = 112,
     .p_source = 104,
     .p_linedefined = 40,
     .p_lastlinedefined = 44,
     .p_code = 56,
     .p_sizecode = 24,
     .p_lineinfo = 72,
     .p_sizelineinfo = 28,
     .p_abslineinfo = NO,
     .p_sizeabslineinfo = NO,
     .lines = LINES_INT,
     .ts_shrlen = 11,
     .ts_len = 16,
     .ts_contents = 24,
     .tag_shrstr = 0x04,
     .tag_lngstr = 0x14},
    {.version = 0x0504,
     .bpf = {.l_status = 10,
	     .l_top = 16,
	     .l_g = 24,
	     .l_ci = 32,
	     .l_stack_last = 40,
	     .l_stack = 48,
	     .l_base_ci = 96,
	     .l_savedpc = NO,
	     .g_mainthread = 264,
	     .ci_func = 0,
	     .ci_previous = 16,
	     .ci_savedpc = 32,
	     .ci_size = 64,
	     .cl_isc = NO,
	     .cl_proto = 24,
	     .cl_cfunc = 24,
	     .tag_lua = 0x46,	   /* ctb(LUA_VLCL) */
	     .tag_cclosure = 0x66, /* ctb(LUA_VCCL) */
	     .tag_light = 0x16,	   /* LUA_VLCF */
	     .tag_off = 8,
	     .tag_thread = 8},
     .p_size = 120,
     .p_source = 112,
     .p_linedefined = 44,
     .p_lastlinedefined = 48,
     .p_code = 64,
     .p_sizecode = 24,
     .p_lineinfo = 88,
     .p_sizelineinfo = 28,
     .p_abslineinfo = 96,
     .p_sizeabslineinfo = 40,
     .lines = LINES_DELTA,
     .ts_shrlen = 11,
     .ts_len = 16,
     .ts_contents = 24,
     .tag_shrstr = 0x04,
     .tag_lngstr = 0x14},
    /*
     * LuaJIT 2.1 in GC64 mode (lj_obj.h; OpenResty's luajit2 adds fields only past those used
     * here): lua_State's base at 32 stands for ci, maxstack for stack_last, its cframe at 80;
     * a GCfunc's ffid, bytecode pointer and C function at 10, 32, 40; global_State's vmstate,
     * cur_L and jit_base at 184, 368, 376. GCproto: sizebc 12, chunkname 64, firstline 72,
     * numline 76, lineinfo 80, 104 bytes before its bytecode; GCstr: gct 9, len 20, characters
     * at 24.
     */
    {.version = LUA_VERSION_LUAJIT,
     .bpf = {.flags = LUA_PROC_LUAJIT,
	     .l_status = 11,
	     .l_top = 40,
	     .l_g = 16,
	     .l_ci = 32,
	     .l_stack_last = 48,
	     .l_stack = 56,
	     .l_base_ci = NO,
	     .l_savedpc = NO,
	     .g_mainthread = NO,
	     .ci_func = NO,
	     .ci_previous = NO,
	     .ci_savedpc = NO,
	     .ci_size = NO,
	     .cl_isc = 10,
	     .cl_proto = 32,
	     .cl_cfunc = 40,
	     .tag_off = 9,
	     .tag_thread = 6,
	     .g_vmstate = 184,
	     .g_cur_l = 368,
	     .g_jit_base = 376,
	     .proto_size = 104,
	     .l_cframe = 80},
     .p_size = 88,
     .p_source = 64,
     .p_linedefined = 72,
     .p_lastlinedefined = 76, /* numline: the last line is firstline + numline */
     .p_code = NO,	      /* the bytecode follows the prototype */
     .p_sizecode = 12,
     .p_lineinfo = 80,
     .p_sizelineinfo = 12,
     .p_abslineinfo = NO,
     .p_sizeabslineinfo = NO,
     .lines = LINES_LUAJIT,
     .ts_shrlen = NO,
     .ts_len = 20,
     .ts_contents = 24,
     .tag_shrstr = 4,
     .tag_lngstr = 4},
};

static const struct luaver *version_row(uint32_t version)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].version == version)
			return &versions[i];
	return NULL;
}

bool lua__offsets(uint32_t version, struct lua_proc *out)
{
	const struct luaver *v = version_row(version);

	if (!v)
		return false;
	*out = v->bpf;
	out->version = v->version;
	return true;
}

static uint64_t u64_at(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static int32_t i32_at(const uint8_t *b, uint16_t off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* The string at addr (a TString), malloc'd and NUL-terminated, cut at MAX_CHUNK; NULL if it
 * is not one. */
static char *read_tstring(const struct luaver *v, lua_read_fn read, void *ctx, uint64_t addr)
{
	uint8_t hdr[32];
	uint64_t len;
	char *s;

	uint8_t tag;

	if (!addr || read(ctx, addr, hdr, sizeof(hdr)))
		return NULL;
	tag = hdr[v->bpf.tag_off]; /* the header's type byte, where a thread's is */
	if (tag != v->tag_shrstr && tag != v->tag_lngstr)
		return NULL;
	if (v->ts_shrlen != NO && tag == v->tag_shrstr)
		len = hdr[v->ts_shrlen];
	else if (v->lines == LINES_LUAJIT)
		len = (uint32_t)i32_at(hdr, v->ts_len); /* MSize */
	else
		len = u64_at(hdr, v->ts_len);
	if (len > MAX_CHUNK)
		len = MAX_CHUNK;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	if (len && read(ctx, addr + v->ts_contents, s, len)) {
		free(s);
		return NULL;
	}
	s[len] = '\0';
	/* A name with a NUL inside ends there; control characters would break text formats. */
	for (char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';
	return s;
}

/* 5.4's lines: a delta per instruction from the one before, and (pc, line) pairs where a delta
 * would not fit or every 128 instructions. */
static int lines_from_deltas(lua_read_fn read, void *ctx, uint64_t deltas, uint32_t n, uint64_t abs,
			     uint32_t nabs, int32_t first, int32_t *out)
{
	int8_t *d = malloc(n ? n : 1);
	int32_t(*a)[2] = NULL;
	uint32_t ai = 0;
	int32_t line = first;
	int err = -EIO;

	if (!d)
		return -ENOMEM;
	if (nabs) {
		a = malloc((size_t)nabs * sizeof(*a));
		if (!a) {
			err = -ENOMEM;
			goto out;
		}
		if (read(ctx, abs, a, (size_t)nabs * sizeof(*a)))
			goto out;
	}
	if (n && read(ctx, deltas, d, n))
		goto out;
	for (uint32_t pc = 0; pc < n; pc++) {
		/* ABSLINEINFO (-0x80): this instruction's line is in the absolute table. */
		if (ai < nabs && a[ai][0] == (int32_t)pc) {
			line = a[ai][1];
			ai++;
		} else if (d[pc] != -0x80) {
			/* Wrapping: a hostile table gives wrong lines, never an overflow. */
			line = (int32_t)((uint32_t)line + (uint32_t)(int32_t)d[pc]);
		}
		out[pc] = line;
	}
	err = 0;
out:
	free(a);
	free(d);
	return err;
}

/* The chunk's name without its '@' (a file) or '=' (a name given by the loader). */
static int chunk_name(const struct luaver *v, lua_read_fn read, void *ctx, uint64_t str,
		      struct lua_func *f)
{
	f->chunk = read_tstring(v, read, ctx, str);
	if (!f->chunk)
		f->chunk = strdup("?");
	if (!f->chunk)
		return -ENOMEM;
	if (f->chunk[0] == '@' || f->chunk[0] == '=') {
		f->is_file = f->chunk[0] == '@';
		memmove(f->chunk, f->chunk + 1, strlen(f->chunk));
	}
	return 0;
}

/*
 * LuaJIT's GCproto (p: its first p_size bytes). Instruction i > 0 is at line firstline +
 * lineinfo[i - 1], each entry as wide as numline needs; instruction 0 is the function's header.
 */
static int luajit_func_read(const struct luaver *v, lua_read_fn read, void *ctx, uint64_t addr,
			    const uint8_t *p, struct lua_func *f)
{
	int32_t first = i32_at(p, v->p_linedefined), numline = i32_at(p, v->p_lastlinedefined);
	uint32_t n = (uint32_t)i32_at(p, v->p_sizelineinfo), width;
	uint64_t lineinfo = u64_at(p, v->p_lineinfo);
	uint8_t *raw;
	int err;

	/* GCHeader's gct: ~LJ_TPROTO. */
	if (p[9] != 7)
		return -EINVAL;
	err = chunk_name(v, read, ctx, u64_at(p, v->p_source), f);
	if (err)
		return err;
	f->line_defined = first > 0 ? (uint32_t)first : 0;
	f->last_line = first > 0 && numline > 0 ? (uint32_t)first + (uint32_t)numline : 0;
	f->code = addr + v->bpf.proto_size;
	if (n < 2 || n > MAX_LINES || !lineinfo || numline < 0)
		return 0; /* no line table (stripped bytecode): named by where it was defined */
	width = numline < 256 ? 1 : numline < 65536 ? 2 : 4;
	raw = malloc((size_t)(n - 1) * width);
	f->lines = malloc((size_t)n * sizeof(*f->lines));
	if (!raw || !f->lines || read(ctx, lineinfo, raw, (size_t)(n - 1) * width)) {
		free(raw);
		free(f->lines);
		f->lines = NULL;
		return 0; /* named, without lines */
	}
	f->lines[0] = first;
	for (uint32_t i = 1; i < n; i++) {
		const uint8_t *e = raw + (size_t)(i - 1) * width;
		uint16_t d16;
		uint32_t d;

		if (width == 1) {
			d = e[0];
		} else if (width == 2) {
			memcpy(&d16, e, sizeof(d16));
			d = d16;
		} else {
			memcpy(&d, e, sizeof(d));
		}
		/* Wrapping: a hostile table gives wrong lines, never an overflow. */
		f->lines[i] = (int32_t)((uint32_t)first + d);
	}
	f->nr_lines = n;
	free(raw);
	return 0;
}

int lua_func__read(uint32_t version, lua_read_fn read, void *ctx, uint64_t addr, struct lua_func *f)
{
	const struct luaver *v = version_row(version);
	uint8_t p[128];
	uint64_t lineinfo;
	int32_t n, nabs = 0;
	int err;

	*f = (struct lua_func){};
	if (!v)
		return -ENOTSUP;
	if (!addr || read(ctx, addr, p, v->p_size))
		return -EIO;
	if (v->lines == LINES_LUAJIT)
		return luajit_func_read(v, read, ctx, addr, p, f);
	/* Not a prototype: the header's tag (LUA_TPROTO: 9 in 5.1, 9 and 10 later). */
	if (p[8] != 9 && p[8] != 10)
		return -EINVAL;
	err = chunk_name(v, read, ctx, u64_at(p, v->p_source), f);
	if (err)
		return err;
	f->line_defined =
	    (uint32_t)(i32_at(p, v->p_linedefined) > 0 ? i32_at(p, v->p_linedefined) : 0);
	f->last_line =
	    (uint32_t)(i32_at(p, v->p_lastlinedefined) > 0 ? i32_at(p, v->p_lastlinedefined) : 0);
	f->code = u64_at(p, v->p_code);
	n = i32_at(p, v->p_sizelineinfo);
	lineinfo = u64_at(p, v->p_lineinfo);
	if (v->p_sizeabslineinfo != NO)
		nabs = i32_at(p, v->p_sizeabslineinfo);
	if (n <= 0 || !lineinfo || (uint32_t)n > MAX_LINES || nabs < 0 ||
	    (uint32_t)nabs > MAX_LINES)
		return 0; /* stripped of its lines: named by where it was defined */
	f->lines = malloc((size_t)n * sizeof(*f->lines));
	if (!f->lines) {
		lua_func__clear(f);
		return -ENOMEM;
	}
	if (v->lines == LINES_INT)
		err = read(ctx, lineinfo, f->lines, (size_t)n * sizeof(*f->lines));
	else
		err = lines_from_deltas(read, ctx, lineinfo, (uint32_t)n,
					nabs ? u64_at(p, v->p_abslineinfo) : 0, (uint32_t)nabs,
					(int32_t)f->line_defined, f->lines);
	if (err) {
		free(f->lines);
		f->lines = NULL;
		return 0;
	}
	f->nr_lines = (uint32_t)n;
	return 0;
}

void lua_func__clear(struct lua_func *f)
{
	free(f->chunk);
	free(f->lines);
	free(f->name);
	*f = (struct lua_func){};
}

uint32_t lua_func__line(const struct lua_func *f, uint64_t pc)
{
	uint64_t idx;

	/* savedpc points past the instruction running (or calling). */
	if (!f->lines || pc <= f->code || (pc - f->code) % 4)
		return f->line_defined;
	idx = (pc - f->code) / 4 - 1;
	if (idx >= f->nr_lines || f->lines[idx] <= 0)
		return f->line_defined;
	return (uint32_t)f->lines[idx];
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Copies the dotted name at s (`a.b:c`) into out: its length, 0 if none. */
static size_t copy_name(const char *s, size_t len, char *out, size_t cap)
{
	if (!len || len >= cap || isdigit((unsigned char)s[0]))
		return 0;
	memcpy(out, s, len);
	out[len] = '\0';
	return len;
}

bool lua__name_from_source(const char *line, char *out, size_t cap)
{
	const char *kw = line, *s, *e;

	/* The keyword `function`, as a word of its own. */
	for (;;) {
		kw = strstr(kw, "function");
		if (!kw)
			return false;
		if ((kw == line || !ident_char(kw[-1])) && !ident_char(kw[8]))
			break;
		kw += 8;
	}
	/* `function a.b:c(`: the name follows. */
	s = kw + 8;
	while (*s == ' ' || *s == '\t')
		s++;
	for (e = s; ident_char(*e) || *e == '.' || *e == ':'; e++)
		;
	if (e > s && copy_name(s, (size_t)(e - s), out, cap))
		return true;
	/* `x = function(`, `local x = function(`, `t.x = function(`, `x = function(` in a table. */
	e = kw;
	while (e > line && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e == line || e[-1] != '=' || (e - 1 > line && strchr("=~<>", e[-2])))
		return false;
	e--;
	while (e > line && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (s = e; s > line && (ident_char(s[-1]) || s[-1] == '.' || s[-1] == ':'); s--)
		;
	return e > s && copy_name(s, (size_t)(e - s), out, cap);
}
