-- SPDX-License-Identifier: GPL-2.0-only
-- Two coroutines (coroutine.wrap) that lua_coro_loop resumes in turn, for arg[1] seconds: samples
-- in coro_hot carry coro_body's frames, then the resumer's (lua_coro_loop < main chunk).

-- A line on stdout once running: the test starts its window then.
io.write("0\n")
io.stdout:flush()

local function coro_hot()
  local s = 0
  for i = 1, 20000 do
    s = s + i % 5 -- CORO_LOOP
  end
  return s
end

local function coro_body()
  while true do
    local r = coro_hot() -- CORO_CALL
    coroutine.yield(r)
  end
end

function lua_coro_loop(seconds)
  local a, b = coroutine.wrap(coro_body), coroutine.wrap(coro_body)
  local deadline = os.clock() + seconds
  local t = 0
  while os.clock() < deadline do
    t = t + a() + b() -- RESUME_CALL
  end
  return t
end

lua_coro_loop(tonumber(arg and arg[1] or 5)) -- MAIN_CALL
