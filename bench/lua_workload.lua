-- SPDX-License-Identifier: GPL-2.0-only
-- Fixed work for bench/runtimes/lua.sh, for every Lua release: arg[1] rounds (default 15000, about 8 s) of
-- lua_dispatch (lua_hot three times, lua_cold once, plain Lua loops). Prints nothing: the
-- script times the whole process.

local function lua_hot(n)
  local s = 0
  for i = 1, n do
    s = s + i % 7
  end
  return s
end

local function lua_cold(n)
  local s = 0
  for i = 1, n do
    s = s + i % 7
  end
  return s
end

local function lua_dispatch(rounds)
  local t = 0
  for _ = 1, rounds do
    t = t + lua_hot(20000) + lua_hot(20000) + lua_hot(20000) + lua_cold(20000)
  end
  return t
end

lua_dispatch(tonumber(arg and arg[1] or 15000))
