-- SPDX-License-Identifier: GPL-2.0-only
-- The content_by_lua_file handler of tests/integration/test_lua.py's nginx (Debian's nginx with
-- its Lua module, on LuaJIT, interpreted): each request runs ngx_handle, which spends its time
-- in ngx_work and answers with ngx.say, a C function of the module.

local function ngx_work(n)
  local s = 0
  for i = 1, n do
    s = s + i -- NGX_LOOP (no %: LuaJIT's modulo helper runs without unwind rows of its own)
  end
  return s
end

local function ngx_handle()
  local r = ngx_work(500000) -- NGX_WORK_CALL
  ngx.say(r)
end

ngx_handle() -- NGX_HANDLE_CALL
