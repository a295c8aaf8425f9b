-- first_item.lua: the kernel tests' Lua rule on top of walker. An agent's first item of the
-- episode is worth an extra `bonus`; the rule learns of items from the bus and keeps its own
-- per-episode state.
local p = polis.params{
  {key = "bonus", type = "double", default = 0.5, min = -100, max = 100,
   doc = "extra reward for an agent's first item of the episode"},
}

local seen, now = {}, {}

polis.on("reset", function() seen = {} end)
polis.on("begin", function() now = {} end)

polis.subscribe("item.picked", function(ev)
  if not seen[ev.agent] then
    seen[ev.agent] = true
    now[ev.agent] = true
    polis.log(string.format("tick %d: agent %d picked its first item at (%d, %d)",
                            polis.tick(), ev.agent, ev.x, ev.y))
  end
end)

polis.reward("first_item", function(agent)
  if now[agent] then return p.bonus end
  return 0
end)
