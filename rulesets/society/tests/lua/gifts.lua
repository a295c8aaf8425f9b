-- gifts.lua: a rule on top of society through its exports. At every reset each agent gets
-- one stone (part of the initial state, not a reward); after every step in which an agent
-- picked wood, it gets a bonus stone (a reward), and a pile of 2 wood grows on (0, 0).
local wood, stone
local picked = {}

polis.on_start(function()
  wood = polis.call("society.resource_id", "wood")
  stone = polis.call("society.resource_id", "stone")
end)

polis.on("reset", function()
  for a = 0, polis.n_agents() - 1 do
    assert(polis.call("society.give", a, stone, 1) == 0)
  end
end)

polis.subscribe("resource.picked", function(ev)
  if ev.resource == wood then picked[#picked + 1] = ev.agent end
end)

polis.on("post", function()
  for _, a in ipairs(picked) do
    assert(polis.call("society.give", a, stone, 1) == 0)
  end
  picked = {}
  if polis.call("society.pile", 0, 0, wood) == 0 then
    assert(polis.call("society.set_pile", 0, 0, wood, 2) == 0)
  end
  -- refused: more stone than the capacity
  if polis.call("society.give", 0, stone, 1000) == 0 then error("give over capacity passed") end
end)
