-- scenario: {"agents": 1, "max_steps": 2}
-- episodes: 4
-- on-error: reset
-- timeout: 120
-- The default limits (no instruction budget, 5 s of wall clock per callback, 64 MiB) stop
-- a runaway script, each with its line, the hook and the tick: an endless loop by the time
-- limit's watchdog, a memory bomb by the memory cap (one request, so that a loaded machine
-- cannot make it run into the time limit first), an endless recursion by Lua's stack limit.
-- Then the env works again.
polis.on("post", function()
  local e = polis.episode()
  if polis.tick() ~= 1 then return end
  if e == 1 then
    while true do end
  elseif e == 2 then
    local s = string.rep("y", 1 << 27) -- 128 MiB asked for in one piece
  elseif e == 3 then
    local function f(n) return f(n + 1) + 1 end
    f(1)
  end
  polis.log("fine", e)
end)
-- expect error: step: script error: default_limits: default_limits.lua:14: time limit of 5000 ms exceeded [hook post, tick 1]
-- expect error: step: script error: default_limits: default_limits.lua:16: memory limit of 67108864 bytes exceeded (lua_memory_limit, shared by the env's scripts) [hook post, tick 1]
-- expect error: step: script error: default_limits: default_limits.lua:18: stack overflow [hook post, tick 1]
-- expect: fine 4
