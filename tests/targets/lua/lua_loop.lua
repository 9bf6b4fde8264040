-- SPDX-License-Identifier: GPL-2.0-only
-- A known call graph for tests/integration/test_lua.py, for every Lua release: lua_dispatch
-- calls lua_hot three times as often as lua_cold, each call of the same cost, and lua_sorted
-- sorts with a comparator (C frames of table.sort between it and its caller). No tail calls:
-- Lua drops a frame that returns a call. Runs for arg[1] seconds of CPU (default 5).

-- A line on stdout once running: the test starts its window then.
io.write("0\n")
io.stdout:flush()

local function lua_work(n)
  local s = 0
  for i = 1, n do
    s = s + i % 7 -- WORK_LOOP
  end
  return s
end

local function lua_hot()
  local r = lua_work(1000) -- HOT_CALL
  return r
end

local lua_cold = function()
  local r = lua_work(1000) -- COLD_CALL
  return r
end

local function lua_less(a, b)
  return a > b -- LESS_LINE
end

function lua_sorted()
  local t = {}
  for i = 1, 600 do
    t[i] = (i * 7919) % 997
  end
  table.sort(t, lua_less) -- SORT_CALL
  return t[1]
end

-- Three calls of lua_hot to one of lua_cold, in random order: a fixed order would repeat with
-- a period the sampling clock could fall in step with.
function lua_dispatch()
  local t = 0
  for _ = 1, 200 do
    if math.random(4) <= 3 then t = t + lua_hot() else t = t + lua_cold() end -- DISPATCH_CALL
  end
  t = t + lua_sorted()
  return t
end

local deadline = os.clock() + tonumber(arg and arg[1] or 5)
while os.clock() < deadline do
  lua_dispatch() -- MAIN_CALL
end
