-- scenario: {"agents": 1, "max_steps": 2, "lua": {"memory_limit": 1000000}}
-- episodes: 2
-- on-error: reset
-- A table bomb hits the memory cap (shared by the env's scripts): a script error, not an
-- out-of-memory of the env; after a reset the garbage is collected and the state works.
local keep = {}
polis.on("post", function()
  if polis.episode() == 1 then
    local t = {}
    for i = 1, 1e9 do t[i] = {i} end
  end
  local t = {}
  for i = 1, 1000 do t[i] = {i} end
  polis.log("post", polis.episode(), polis.tick(), #t)
end)
-- expect error: step: script error: memory_limit: memory_limit.lua:10: memory limit of 1000000 bytes exceeded (lua_memory_limit, shared by the env's scripts) [hook post, tick 0]
-- expect: post 2 0 1000
-- expect: post 2 1 1000
