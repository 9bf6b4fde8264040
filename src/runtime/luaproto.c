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
	LINES_INT,   /* 5.1, 5.3: int lineinfo[sizelineinfo], one line per instruction */
	LINES_DELTA, /* 5.4: signed byte deltas, with absolute lines every so often */
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
	     .tag_lua = 6}, /* LUA_TFUNCTION: isC tells */
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
	     .tag_light = 0x16},   /* LUA_TLCF */
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
	     .tag_light = 0x16},   /* LUA_VLCF */
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

	if (!addr || read(ctx, addr, hdr, sizeof(hdr)))
		return NULL;
	if (hdr[8] != v->tag_shrstr && hdr[8] != v->tag_lngstr)
		return NULL;
	if (v->ts_shrlen != NO && hdr[8] == v->tag_shrstr)
		len = hdr[v->ts_shrlen];
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
	/* Not a prototype: the header's tag (LUA_TPROTO: 9 in 5.1, 9 and 10 later). */
	if (p[8] != 9 && p[8] != 10)
		return -EINVAL;
	f->chunk = read_tstring(v, read, ctx, u64_at(p, v->p_source));
	if (!f->chunk)
		f->chunk = strdup("?");
	if (!f->chunk)
		return -ENOMEM;
	if (f->chunk[0] == '@' || f->chunk[0] == '=') {
		f->is_file = f->chunk[0] == '@';
		memmove(f->chunk, f->chunk + 1, strlen(f->chunk));
	}
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
