-- SPDX-License-Identifier: GPL-2.0-only
-- Off-CPU: lua_nap waits for a child process (os.execute: system(), then waitpid) under
-- lua_nap_loop, for arg[1] seconds.

-- A line on stdout once running: the test starts its window then.
io.write("0\n")
io.stdout:flush()

local function lua_nap()
  local ok = os.execute("sleep 0.05") -- NAP_CALL
  return ok
end

function lua_nap_loop(seconds)
  local deadline = os.time() + seconds
  local n = 0
  while os.time() < deadline do
    if lua_nap() then -- LOOP_CALL
      n = n + 1
    end
  end
  return n
end

lua_nap_loop(tonumber(arg and arg[1] or 5)) -- MAIN_CALL
