-- take_hammer.lua: a rule that takes agent 0's hammer away at the end of the first step, so
-- a plan that needed it (GATHER coal) finds its requirement lost.
local hammer
polis.on_start(function() hammer = polis.call("society.resource_id", "hammer") end)
polis.on("post", function()
  if polis.tick() == 0 then assert(polis.call("society.give", 0, hammer, -1) == 0) end
end)
