-- bonus.lua: a rule written in Lua on top of the gather game.
-- The first coin an agent collects in an episode is worth an extra `bonus`; the rule learns
-- about coins from the bus, keeps its own per-episode state, and adds a reward function.
local p = polis.params{
  {key = "bonus", type = "double", default = 0.5, min = -100, max = 100,
   doc = "extra reward for an agent's first coin of the episode"},
}

local has_coin = {}
local pending = {}

polis.on("reset", function()
  has_coin = {}
end)

polis.on("begin", function()
  pending = {}
end)

polis.subscribe("coin.collected", function(ev)
  if not has_coin[ev.agent] then
    has_coin[ev.agent] = true
    pending[ev.agent] = true
    polis.log(string.format("tick %d: agent %d found its first coin at (%d, %d)",
                            polis.tick(), ev.agent, ev.x, ev.y))
  end
end)

polis.reward("first_coin", function(agent)
  if pending[agent] then return p.bonus end
  return 0
end)
