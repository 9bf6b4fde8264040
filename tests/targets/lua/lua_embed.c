// SPDX-License-Identifier: GPL-2.0-only
/*
 * A C program embedding Lua 5.4 (the shared liblua5.4) that runs two coroutines from C: it loads
 * lua_embed.lua (argv[1]), makes a thread for each of embed_a and embed_b and resumes them in
 * turn with lua_resume from resume_loop, for argv[2] seconds. Samples in the coroutines' Lua
 * functions must read embed_a_hot < embed_a < lua_resume < resume_loop < main.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static lua_State *coroutine(lua_State *L, const char *fn)
{
	lua_State *co = lua_newthread(L);

	/* Kept in the registry: a thread nothing refers to is collected. */
	luaL_ref(L, LUA_REGISTRYINDEX);
	lua_getglobal(co, fn);
	return co;
}

static int resume_loop(lua_State *L, double seconds)
{
	lua_State *a = coroutine(L, "embed_a"), *b = coroutine(L, "embed_b");
	double end = now() + seconds;
	int nres;

	while (now() < end) {
		if (lua_resume(a, L, 0, &nres) != LUA_YIELD)
			return 1;
		lua_pop(a, nres);
		if (lua_resume(b, L, 0, &nres) != LUA_YIELD)
			return 1;
		lua_pop(b, nres);
	}
	return 0;
}

int main(int argc, char **argv)
{
	lua_State *L;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SCRIPT SECONDS\n", argv[0]);
		return 2;
	}
	L = luaL_newstate();
	luaL_openlibs(L);
	if (luaL_dofile(L, argv[1])) {
		fprintf(stderr, "%s\n", lua_tostring(L, -1));
		return 1;
	}
	printf("%d\n", 0);
	fflush(stdout);
	ret = resume_loop(L, atof(argv[2]));
	lua_close(L);
	return ret;
}
