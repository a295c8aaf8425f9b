-- food.lua: adds a food resource, a meal and a cooking recipe to society while the script
-- loads (before society's start() freezes its tables), and logs every meal cooked.
-- mode "twice" defines food twice, "unknown" names a resource nobody defines.
local p = polis.params{
  {key = "mode", type = "string", default = "ok", doc = "ok, twice or unknown"},
}

assert(polis.call("society.define_resource", "food", 3, "") == 0)
assert(polis.call("society.define_resource", "meal", 10, "") == 0)
local inputs = p.mode == "unknown" and "food:2, wod:1" or "food:2, wood:1"
assert(polis.call("society.define_recipe", "cooking", inputs, "meal:1", "") == 0)
if p.mode == "twice" then
  polis.call("society.define_resource", "food", 4, "")
end

polis.subscribe("recipe.produced", function(ev)
  local meal = polis.call("society.resource_id", "meal")
  polis.log(string.format("agent %d cooked at (%d, %d) and holds %d meal", ev.agent, ev.x, ev.y,
                          polis.call("society.inventory", ev.agent, meal)))
end)
