/* DEPS: src/runtime/luaproto.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lua frames: the per-release offsets against what each release's own library says. For every
 * liblua5.x and libluajit on the machine (skipped when absent), a child process loads it, runs a
 * chunk whose functions call a C function, and there walks the running state's CallInfo chain as
 * the sampler does (bpf/lua.bpf.h) with the table's offsets: the Lua functions found, their chunk,
 * where they were defined and the line each is at must be what lua_getinfo answers, and the
 * global state's main thread must be the state. Then names from source lines.
 */
#include <dlfcn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/lua_abi.h"
#include "src/runtime/lua.h"
#include "testlib.h"

/* The C API, as each release spells it (dlsym'd: the three libraries define the same names). */
struct api {
	uint32_t version;
	const char *path;
	void *(*newstate)(void);
	void (*openlibs)(void *L);
	int (*loadbuffer)(void *L, const char *buf, size_t n, const char *name);
	int (*loadbufferx)(void *L, const char *buf, size_t n, const char *name, const char *mode);
	int (*pcall)(void *L, int nargs, int nres, int errfunc);
	int (*pcallk)(void *L, int nargs, int nres, int errfunc, intptr_t ctx, void *k);
	void (*pushcclosure)(void *L, int (*fn)(void *), int n);
	void (*setglobal)(void *L, const char *name);
	void (*setfield)(void *L, int idx, const char *name);
	int (*getstack)(void *L, int level, void *ar);
	int (*getinfo)(void *L, const char *what, void *ar);
	/* lua_Debug: where currentline and linedefined are (source is at 32 in all three) */
	size_t ar_currentline, ar_linedefined;
};

static struct api api;
static int child_failures;

#define CHILD_CHECK(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "    lua %u.%u: ", api.version >> 8, api.version & 0xff);  \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			child_failures++;                                                          \
		}                                                                                  \
	} while (0)

static const char chunk[] = "local function inner(x)\n"	  /* 1 */
			    "  local v = check(x) or 0\n" /* 2 */
			    "  return v + 1\n"		  /* 3 */
			    "end\n"			  /* 4 */
			    "\n"			  /* 5 */
			    "function outer()\n"	  /* 6 */
			    "  local y = inner(3)\n"	  /* 7 */
			    "  return y\n"		  /* 8 */
			    "end\n"			  /* 9 */
			    "local r = outer()\n"	  /* 10 */
			    "return r\n";		  /* 11 */

static int self_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	(void)ctx;
	memcpy(buf, (const void *)(uintptr_t)addr, n);
	return 0;
}

static uint64_t word_at(uint64_t addr, uint16_t off)
{
	uint64_t v;

	memcpy(&v, (const void *)(uintptr_t)(addr + off), sizeof(v));
	return v;
}

struct frame_want {
	uint32_t line, defined;
};

static void check_jit(void *L, const struct lua_proc *lp, const struct frame_want *want,
		      uint32_t nw);

/* The walk's frame nf, the prototype at proto at pc, against lua_getinfo's want[nf]. */
static void check_frame(uint64_t proto, uint64_t pc, uint32_t nf, const struct frame_want *want,
			uint32_t nw)
{
	struct lua_func f;

	CHILD_CHECK(!lua_func__read(api.version, self_read, NULL, proto, &f),
		    "frame %u: prototype unreadable", nf);
	if (nf < nw) {
		CHILD_CHECK(!strcmp(f.chunk, "test.lua") && f.is_file, "frame %u: chunk %s", nf,
			    f.chunk);
		CHILD_CHECK(f.line_defined == want[nf].defined,
			    "frame %u: defined at %u, lua_getinfo says %u", nf, f.line_defined,
			    want[nf].defined);
		CHILD_CHECK(lua_func__line(&f, pc) == want[nf].line,
			    "frame %u: line %u, lua_getinfo says %u", nf, lua_func__line(&f, pc),
			    want[nf].line);
	}
	lua_func__clear(&f);
}

/* Called from Lua: compares the walk with lua_getinfo's answers. */
static int check(void *L)
{
	struct frame_want want[8];
	struct lua_proc lp;
	uint8_t ar[256];
	uint64_t ci, base, g;
	uint32_t nw = 0, nf = 0;

	CHILD_CHECK(lua__offsets(api.version, &lp), "no offsets");
	for (int level = 1; nw < 8 && api.getstack(L, level, ar); level++) {
		const char *what;
		int line, defined;

		api.getinfo(L, "Sl", ar);
		memcpy(&what, ar + 24, sizeof(what));
		memcpy(&line, ar + api.ar_currentline, sizeof(line));
		memcpy(&defined, ar + api.ar_linedefined, sizeof(defined));
		if (strcmp(what, "C"))
			want[nw++] = (struct frame_want){(uint32_t)line, (uint32_t)defined};
	}
	CHILD_CHECK(nw == 3, "lua_getinfo found %u Lua frames, not 3", nw);
	/* The state: a thread, running, its global state's main thread. */
	CHILD_CHECK(((uint8_t *)L)[lp.tag_off] == lp.tag_thread, "tag %u, not a thread's",
		    ((uint8_t *)L)[lp.tag_off]);
	if (lp.flags & LUA_PROC_LUAJIT) {
		check_jit(L, &lp, want, nw);
		return 0;
	}
	CHILD_CHECK(((uint8_t *)L)[lp.l_status] == 0, "status %u", ((uint8_t *)L)[lp.l_status]);
	g = word_at((uintptr_t)L, lp.l_g);
	CHILD_CHECK(word_at(g, lp.g_mainthread) == (uintptr_t)L, "main thread not at %u",
		    lp.g_mainthread);
	CHILD_CHECK(word_at((uintptr_t)L, lp.l_stack) <= word_at((uintptr_t)L, lp.l_top) &&
			word_at((uintptr_t)L, lp.l_top) <= word_at((uintptr_t)L, lp.l_stack_last),
		    "stack pointers out of order");
	/* The walk, leaf (check's own C frame) first. */
	ci = word_at((uintptr_t)L, lp.l_ci);
	base = (lp.flags & LUA_PROC_CI_ARRAY) ? word_at((uintptr_t)L, lp.l_base_ci) : 0;
	for (int i = 0; ci && i < 16; i++) {
		uint64_t func = word_at(ci, lp.ci_func), cl;
		uint8_t tag;

		if ((lp.flags & LUA_PROC_CI_ARRAY) && ci < base)
			break;
		tag = func ? *(uint8_t *)(uintptr_t)(func + 8) : 0;
		cl = func ? word_at(func, 0) : 0;
		if (tag == lp.tag_lua &&
		    !(lp.cl_isc != LUA_NO_FIELD && *(uint8_t *)(uintptr_t)(cl + lp.cl_isc))) {
			check_frame(word_at(cl, lp.cl_proto), word_at(ci, lp.ci_savedpc), nf++,
				    want, nw);
		} else if (i == 0) {
			/* check itself: a C function, light (5.2+) or a closure. */
			CHILD_CHECK(tag == lp.tag_lua || tag == lp.tag_light ||
					tag == lp.tag_cclosure,
				    "leaf tag %#x, not a C function's", tag);
		}
		ci = (lp.flags & LUA_PROC_CI_ARRAY) ? ci - lp.ci_size : word_at(ci, lp.ci_previous);
	}
	CHILD_CHECK(nf == nw, "the walk found %u Lua frames, lua_getinfo %u", nf, nw);
	return 0;
}

/*
 * LuaJIT's walk, as bpf/lua.bpf.h's lj__step does it: from L->base (C code runs), each frame's
 * function under its base and its link, to the stack's bottom.
 */
static void check_jit(void *L, const struct lua_proc *lp, const struct frame_want *want,
		      uint32_t nw)
{
	uint64_t g = word_at((uintptr_t)L, lp->l_g), base = word_at((uintptr_t)L, lp->l_ci);
	uint64_t stack = word_at((uintptr_t)L, lp->l_stack), pc = 0;
	uint32_t nf = 0;
	int32_t vmstate;
	bool skip = false;

	memcpy(&vmstate, (void *)(uintptr_t)(g + lp->g_vmstate), sizeof(vmstate));
	CHILD_CHECK(vmstate == -2, "vmstate %d, not ~LJ_VMST_C", vmstate);
	CHILD_CHECK(word_at(g, lp->g_cur_l) == (uintptr_t)L, "cur_L not at %u", lp->g_cur_l);
	CHILD_CHECK(word_at(g, lp->g_jit_base) == 0, "jit_base set outside a trace");
	/* The C frame the VM runs in: it returns into lua_pcall (the one run_release made), and
	 * no VM entry came before it. */
	{
		uint64_t cf = word_at((uintptr_t)L, lp->l_cframe) & LJ_CFRAME_RAWMASK;
		uint64_t ret = cf ? word_at(cf + LJ_CFRAME_SIZE - 8, 0) : 0;
		Dl_info di;

		CHILD_CHECK(cf && dladdr((void *)(uintptr_t)ret, &di) && di.dli_sname &&
				!strcmp(di.dli_sname, "lua_pcall"),
			    "the VM's C frame %#lx returns to %#lx, not into lua_pcall",
			    (unsigned long)cf, (unsigned long)ret);
		CHILD_CHECK(cf && !word_at(cf + LJ_CFRAME_OFS_PREV, 0),
			    "a C frame entered before lua_pcall's");
	}
	for (int i = 0; base > stack + 16 && i < 16; i++) {
		uint64_t fn = word_at(base - 16, 0) & ((1ULL << 47) - 1),
			 link = word_at(base - 8, 0);
		uint8_t *cl = (uint8_t *)(uintptr_t)fn;

		if (i == 0)
			CHILD_CHECK(cl[9] == 8 && cl[lp->cl_isc] == 1 &&
					word_at(fn, lp->cl_cfunc) == (uintptr_t)check,
				    "leaf: not check's C function");
		if (fn != (uintptr_t)L && !skip && cl[9] == 8 && !cl[lp->cl_isc]) {
			check_frame(word_at(fn, lp->cl_proto) - lp->proto_size, pc, nf++, want, nw);
		}
		skip = false;
		if ((link & 3) == 0) {
			uint32_t ins;

			memcpy(&ins, (void *)(uintptr_t)(link - 4), sizeof(ins));
			pc = link;
			base -= 8 * (2 + ((ins >> 8) & 0xff));
		} else {
			skip = (link & 3) == 3; /* a vararg call's first frame follows */
			pc = 0;
			base -= link & ~7ULL;
		}
	}
	CHILD_CHECK(nf == nw, "the walk found %u Lua frames, lua_getinfo %u", nf, nw);
}

/*
 * Called from a coroutine that coroutine.resume or a wrap runs (LuaJIT): its resumer found as
 * bpf/lua.bpf.h's lj__resumer finds it, through the C frame of lj_vm_resume that the
 * coroutine's cframe points at, and its walk from the resumer's base reaches the chunk's frame
 * that resumed it (want: its line).
 */
static void *main_state;
static int coro_calls;

static int check_coro(void *L)
{
	struct lua_proc lp;
	uint64_t cf, raw, R, base, fn, link;
	uint8_t *cl;

	int coro_line = ++coro_calls == 1 ? 2 : 4; /* coro_chunk's resume, then its wrap */

	CHILD_CHECK(lua__offsets(api.version, &lp), "no offsets");
	cf = word_at((uintptr_t)L, lp.l_cframe);
	raw = cf & ~3ULL;
	CHILD_CHECK(L != main_state && (cf & 1), "cframe %#lx of a coroutine without CFRAME_RESUME",
		    (unsigned long)cf);
	CHILD_CHECK(raw > (uintptr_t)&cf && raw - (uintptr_t)&cf < (1u << 20),
		    "cframe %#lx not on this C stack (%p)", (unsigned long)raw, (void *)&cf);
	R = word_at(raw + LJ_CFRAME_SIZE, LJ_CFRAME_OFS_L);
	CHILD_CHECK(R == (uintptr_t)main_state, "the resumer's SAVE_L %#lx, not the main state %p",
		    (unsigned long)R, main_state);
	if (R != (uintptr_t)main_state)
		return 0;
	CHILD_CHECK((word_at(R, lp.l_cframe) & ~3ULL) == raw + LJ_CFRAME_SIZE,
		    "the resumer's cframe %#lx, not %#lx", (unsigned long)word_at(R, lp.l_cframe),
		    (unsigned long)(raw + LJ_CFRAME_SIZE));
	/* Its frame: coroutine.resume's or the wrap's (a fast function), a slot under its base
	 * when coroutine.resume moved it up; the chunk's frame under that, at the call's line. */
	base = word_at(R, lp.l_ci);
	if ((word_at(base - 16, 0) >> 47) != LJ_TAG_FUNC)
		base -= 8;
	CHILD_CHECK((word_at(base - 16, 0) >> 47) == LJ_TAG_FUNC, "no function under the base");
	fn = word_at(base - 16, 0) & ((1ULL << 47) - 1);
	cl = (uint8_t *)(uintptr_t)fn;
	CHILD_CHECK(cl[9] == 8 && cl[lp.cl_isc] > 1, "the resumer's leaf: not a fast function");
	link = word_at(base - 8, 0);
	CHILD_CHECK((link & 3) == 0, "coroutine.resume's link %#lx: not a Lua caller's pc",
		    (unsigned long)link);
	if (!(link & 3)) {
		uint32_t ins;
		struct lua_func f = {};

		memcpy(&ins, (void *)(uintptr_t)(link - 4), sizeof(ins));
		base -= 8 * (2 + ((ins >> 8) & 0xff));
		fn = word_at(base - 16, 0) & ((1ULL << 47) - 1);
		CHILD_CHECK(!lua_func__read(lp.version, self_read, NULL,
					    word_at(fn, lp.cl_proto) - lp.proto_size, &f),
			    "the resumer's caller: no prototype");
		CHILD_CHECK(lua_func__line(&f, link) == (uint32_t)coro_line,
			    "the resumer's caller at line %u, not %d", lua_func__line(&f, link),
			    coro_line);
		lua_func__clear(&f);
	}
	return 0;
}

static const char coro_chunk[] =
    "local co = coroutine.create(function() check_coro() end)\n" /* 1 */
    "coroutine.resume(co)\n"					 /* 2 */
    "local w = coroutine.wrap(function() check_coro() end)\n"	 /* 3 */
    "w()\n";							 /* 4 */

static void *sym(void *h, const char *name)
{
	return dlsym(h, name);
}

/* In a child: load the release, run the chunk. Exit status: failures. */
static int run_release(void)
{
	void *h = dlopen(api.path, RTLD_NOW | RTLD_LOCAL), *L;
	int err;

	if (!h)
		return 100;
	api.newstate = (void *(*)(void))sym(h, "luaL_newstate");
	api.openlibs = (void (*)(void *))sym(h, "luaL_openlibs");
	api.loadbuffer =
	    (int (*)(void *, const char *, size_t, const char *))sym(h, "luaL_loadbuffer");
	api.loadbufferx = (int (*)(void *, const char *, size_t, const char *, const char *))sym(
	    h, "luaL_loadbufferx");
	api.pcall = (int (*)(void *, int, int, int))sym(h, "lua_pcall");
	api.pcallk = (int (*)(void *, int, int, int, intptr_t, void *))sym(h, "lua_pcallk");
	api.pushcclosure = (void (*)(void *, int (*)(void *), int))sym(h, "lua_pushcclosure");
	api.setglobal = (void (*)(void *, const char *))sym(h, "lua_setglobal");
	api.setfield = (void (*)(void *, int, const char *))sym(h, "lua_setfield");
	api.getstack = (int (*)(void *, int, void *))sym(h, "lua_getstack");
	api.getinfo = (int (*)(void *, const char *, void *))sym(h, "lua_getinfo");
	if (!api.newstate || !api.openlibs || !api.pushcclosure || !api.getstack || !api.getinfo ||
	    (!api.loadbuffer && !api.loadbufferx) || (!api.pcall && !api.pcallk))
		return 101;
	L = api.newstate();
	api.openlibs(L);
	api.pushcclosure(L, check, 0);
	if (api.setglobal)
		api.setglobal(L, "check");
	else
		api.setfield(L, -10002 /* 5.1's LUA_GLOBALSINDEX */, "check");
	err = api.loadbufferx ? api.loadbufferx(L, chunk, sizeof(chunk) - 1, "@test.lua", NULL)
			      : api.loadbuffer(L, chunk, sizeof(chunk) - 1, "@test.lua");
	if (err)
		return 102;
	err = api.pcallk ? api.pcallk(L, 0, 1, 0, 0, NULL) : api.pcall(L, 0, 1, 0);
	CHILD_CHECK(!err, "the chunk failed");
	if (api.version == LUA_VERSION_LUAJIT) {
		main_state = L;
		api.pushcclosure(L, check_coro, 0);
		api.setfield(L, -10002, "check_coro");
		err = api.loadbuffer(L, coro_chunk, sizeof(coro_chunk) - 1, "@coro.lua") ||
		      api.pcall(L, 0, 0, 0);
		CHILD_CHECK(!err && coro_calls == 2, "the coroutines' chunk: %d, %d calls", err,
			    coro_calls);
	}
	return child_failures > 99 ? 99 : child_failures;
}

TEST(offsets_match_getinfo)
{
	static const struct {
		uint32_t version;
		const char *path;
		size_t currentline, linedefined;
	} releases[] = {
	    {0x0501, "/usr/lib/x86_64-linux-gnu/liblua5.1.so.0", 40, 48},
	    {0x0503, "/usr/lib/x86_64-linux-gnu/liblua5.3.so.0", 40, 44},
	    {0x0504, "/usr/lib/x86_64-linux-gnu/liblua5.4.so.0", 48, 52},
	    /* Debian's luajit2 (OpenResty's) or luajit: the same soname */
	    {LUA_VERSION_LUAJIT, "/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2", 40, 48},
	};
	int tested = 0;

	for (size_t i = 0; i < sizeof(releases) / sizeof(releases[0]); i++) {
		int status;
		pid_t pid;

		if (access(releases[i].path, R_OK))
			continue;
		api = (struct api){.version = releases[i].version,
				   .path = releases[i].path,
				   .ar_currentline = releases[i].currentline,
				   .ar_linedefined = releases[i].linedefined};
		pid = fork();
		if (pid == 0)
			_exit(run_release());
		CHECK(pid > 0);
		CHECK(waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status));
		if (WEXITSTATUS(status))
			FAILF("Lua %u.%u (%s): %d failures (100+: could not load it)",
			      releases[i].version >> 8, releases[i].version & 0xff,
			      releases[i].path, WEXITSTATUS(status));
		tested++;
	}
	if (!tested)
		SKIP("no liblua5.1, 5.3, 5.4 or libluajit (scripts/install-deps.sh installs them)");
}

TEST(unknown_releases)
{
	struct lua_proc lp;

	CHECK(!lua__offsets(0x0502, &lp));
	CHECK(!lua__offsets(0x0505, &lp));
	CHECK(!lua__offsets(0, &lp));
}

TEST(names_from_source)
{
	static const struct {
		const char *line, *name;
	} cases[] = {
	    {"local function hot(n)\n", "hot"},
	    {"function M.handler(r)\n", "M.handler"},
	    {"function obj:method() end", "obj:method"},
	    {"local cold = function()\n", "cold"},
	    {"  t.x = function(a, b)", "t.x"},
	    {"  on_done = function(a) -- in a table", "on_done"},
	    {"table.sort(t, function(a, b) return a < b end)", NULL},
	    {"return function() end", NULL},
	    {"if x == function() end then", NULL},
	    {"local functional = 1", NULL},
	    {"no keyword here", NULL},
	    {"function 9lives()", NULL},
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = lua__name_from_source(cases[i].line, out, sizeof(out));

		if (!cases[i].name) {
			if (got)
				FAILF("%s: named %s", cases[i].line, out);
			continue;
		}
		CHECK(got);
		if (got)
			CHECK_STR(out, cases[i].name);
	}
	/* A name longer than the room is not cut into another. */
	CHECK(!lua__name_from_source("function abcdefghijklmnop()", out, 8));
}

/* A prototype whose sizes lie: bounded reads, no allocation of what they claim. */
static uint8_t fake_proto[128];

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	(void)ctx;
	if (addr == 0x1000 && n <= sizeof(fake_proto)) {
		memcpy(buf, fake_proto, n);
		return 0;
	}
	return -5;
}

TEST(hostile_prototypes)
{
	struct lua_func f;
	int32_t huge = 0x7fffffff;

	/* Not a prototype's tag. */
	memset(fake_proto, 0, sizeof(fake_proto));
	CHECK(lua_func__read(0x0504, fake_read, NULL, 0x1000, &f) == -22);
	/* A prototype claiming 2^31 lines at an unreadable address: named, without lines. */
	fake_proto[8] = 10;
	memcpy(fake_proto + 28, &huge, sizeof(huge));
	memset(fake_proto + 88, 0x41, 8);
	CHECK(!lua_func__read(0x0504, fake_read, NULL, 0x1000, &f));
	CHECK(!f.lines);
	CHECK_STR(f.chunk, "?");
	CHECK_EQ(lua_func__line(&f, 0x1234), 0);
	lua_func__clear(&f);
	CHECK(lua_func__read(0x0504, fake_read, NULL, 0x2000, &f) == -5);
	CHECK(lua_func__read(0x0502, fake_read, NULL, 0x1000, &f) == -95);
}

int main(void)
{
	RUN(offsets_match_getinfo);
	RUN(unknown_releases);
	RUN(names_from_source);
	RUN(hostile_prototypes);
	return test_summary();
}
