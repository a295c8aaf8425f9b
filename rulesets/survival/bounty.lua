-- bounty.lua: a rule written in Lua on top of survival. A bounty on zombies: whoever kills
-- one is paid `bounty` reward, and by night (when zombies swarm) also `night_stone` stone
-- from the village stores (survival.give). The rule learns about kills from the bus
-- (survival.mob_killed), keeps its own per-step state, adds a reward function, and tells
-- the bus what it paid (bounty.paid).
local p = polis.params{
  {key = "bounty", type = "double", default = 0.5, min = -100, max = 100,
   doc = "reward per zombie killed"},
  {key = "night_stone", type = "int", default = 1, min = 0, max = 9,
   doc = "stone given per zombie killed while the light is below 0.5"},
}

local ZOMBIE = 0
local paid = {}

polis.event("bounty.paid", {{"agent", "i32"}, {"stone", "i32"}})

polis.on("begin", function()
  paid = {}
end)

polis.subscribe("survival.mob_killed", function(ev)
  if ev.mob ~= ZOMBIE then return end
  paid[ev.agent] = (paid[ev.agent] or 0) + 1
  -- day and night follow Craftax's light curve (README "Day and night")
  local t = polis.tick() % 300
  local stone = 0
  if t >= 148 and t <= 272 then
    stone = p.night_stone
    if stone > 0 then polis.call("survival.give", ev.agent, "stone", stone) end
  end
  polis.publish("bounty.paid", {agent = ev.agent, stone = stone})
end)

polis.reward("bounty", function(agent)
  return (paid[agent] or 0) * p.bounty
end)
