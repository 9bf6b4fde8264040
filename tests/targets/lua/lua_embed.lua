-- SPDX-License-Identifier: GPL-2.0-only
-- The coroutines tests/targets/lua/lua_embed.c resumes: embed_a's work costs twice embed_b's.

function embed_a_hot()
  local s = 0
  for i = 1, 20000 do
    s = s + i % 3 -- A_LOOP
  end
  return s
end

function embed_b_hot()
  local s = 0
  for i = 1, 10000 do
    s = s + i % 3 -- B_LOOP
  end
  return s
end

function embed_a()
  while true do
    local r = embed_a_hot() -- A_CALL
    coroutine.yield(r)
  end
end

function embed_b()
  while true do
    local r = embed_b_hot() -- B_CALL
    coroutine.yield(r)
  end
end
