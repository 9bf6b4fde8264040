-- SPDX-License-Identifier: GPL-2.0-only
-- Memory profiling of Lua frames: every 10 ms lua_mem_loop calls lua_leak, which keeps 16 strings
-- of 4 KiB, and lua_churn, which makes and drops 50. Prints a line, waits for one on
-- stdin (the profiler attached), runs arg[1] seconds, then waits until killed.

local kept = {}

-- Both make strings of 4 KiB: under Lua 5.1's buffer size (BUFSIZ), so no release builds them
-- from pieces, and the bytes each makes are 16:50 in every release.
local function lua_leak(n)
  for i = 1, 16 do
    kept[#kept + 1] = string.rep("k", 4096 - 8) .. string.format("%08d", n * 16 + i) -- LEAK_CALL
  end
end

local function lua_churn(n)
  for i = 1, 50 do
    local s = string.rep("c", 4096 - 8) .. string.format("%08d", n * 50 + i) -- CHURN_CALL
    if #s == 0 then
      return
    end
  end
end

function lua_mem_loop(seconds)
  local deadline = os.time() + seconds
  local n = 0
  while os.time() < deadline do
    n = n + 1
    lua_leak(n) -- LOOP_LEAK
    lua_churn(n) -- LOOP_CHURN
    os.execute("sleep 0.01")
  end
  return n
end

io.write("0\n")
io.stdout:flush()
io.read("*l") -- "*l": 5.1 knows no "l"
lua_mem_loop(tonumber(arg and arg[1] or 5)) -- MAIN_CALL
io.write("done\n")
io.stdout:flush()
-- Waits for the test to kill it (no child left behind holding the test's pipes).
io.read("*l")
