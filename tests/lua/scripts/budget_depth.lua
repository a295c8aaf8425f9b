-- scenario: {"agents": 1, "max_steps": 1, "lua": {"instruction_limit": 15000000, "time_limit_ms": 5000, "memory_limit": 268435456}}
-- timeout: 120
-- The instruction budget costs the same at any call depth. Its count hook used to re-arm
-- itself every 1,000 instructions with lua_sethook, which walks every frame of the call
-- stack: 150,000 frames deep the same loop that takes milliseconds on top ran into the
-- 5-second time limit, so whether a script passed depended on the machine. Here a loop of
-- about 9 million instructions runs at the bottom of 160,000 Lua frames, well inside both
-- limits; then the budget still stops a loop that does not end, at the same depth.
local function deep(n, work)
  if n == 0 then return work() end
  return deep(n - 1, work) + 0 -- not a tail call: every frame stays on the stack
end
local function loop()
  local x = 0
  for i = 1, 3000000 do x = x + i end
  return x
end
polis.on("world", function()
  if polis.episode() == 1 then
    polis.log("deep loop", deep(160000, loop))
  else
    deep(160000, function() while true do end end)
  end
end)
-- episodes: 2
-- on-error: reset
-- expect: deep loop 4500001500000
-- expect error: step: script error: budget_depth: budget_depth.lua:22: instruction limit of 15000000 exceeded [hook world, tick 0]
