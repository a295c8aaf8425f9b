-- scenario: {"agents": 1, "max_steps": 20, "scripts": [{"path": "../commons.lua", "params": {"map": "WWWWWWWWWWWWWW\nW............W\nW.a.A....a...W\nW..........A.W\nW............W\nW............W\nW.a......a...W\nW..A.....AA..W\nW............W\nW.........P0.W\nWWWWWWWWWWWWWW", "facing": "north", "shuffle_order": false, "end_min_steps": 1000000, "regrowth_p1": 1, "regrowth_p2": 0, "regrowth_p3": 0}}, {"path": "regrowth_shape.lua"}]}
-- Empty apple cells ('a') regrow with the probability of their count k of live apples
-- within Euclidean distance 2 (the cell itself excluded); here p(k=1) = 1 and every other
-- probability is 0. (2, 2) has k = 1 ((4, 2) at distance 2) and (2, 6) has k = 1 ((3, 7) at
-- distance 1.41): both regrow at step 0. (9, 2) has k = 0 ((11, 3) is at distance 2.24):
-- it never regrows, and its grass is dead from the start (code 5, the others 4). (9, 6) has
-- k = 2. Nothing else ever happens in 20 steps.
local VIEW = polis.grid_layer("commons.view")
local W, H = polis.grid_size()
-- where every player is, from the layer the observation is copied from (codes 7 + id)
local function positions()
  local out = {}
  for y = 0, H - 1 do
    for x = 0, W - 1 do
      local v = polis.grid_get(VIEW, x, y)
      if v >= 7 then out[#out + 1] = {v - 7, x, y} end
    end
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  local t = {}
  for _, e in ipairs(out) do t[#t + 1] = string.format("%d:%d,%d", e[1], e[2], e[3]) end
  return table.concat(t, " ")
end
local function codes()
  local t = {}
  for _, c in ipairs{{2, 2}, {9, 2}, {2, 6}, {9, 6}} do
    t[#t + 1] = polis.grid_get(VIEW, c[1], c[2])
  end
  return table.concat(t, " ")
end
polis.on("reset", function() polis.log("codes at reset", codes()) end)
polis.subscribe("commons.grow", function(ev)
  polis.log(string.format("grow %d,%d remaining %d at step %d", ev.x, ev.y, ev.remaining,
                          ev.tick))
end)
polis.on("end", function()
  if polis.tick() == 0 then polis.log("codes after step 0", codes()) end
end)
-- expect: codes at reset 4 5 4 4
-- expect: grow 2,2 remaining 6 at step 0
-- expect: grow 2,6 remaining 7 at step 0
-- expect: codes after step 0 3 5 3 4
-- expect: [commons] episode 1 reached max_steps after 20 steps: per-capita return 0.00, focal 0.00 (agent 0), background none; apples left 7 of 9; patches depleted 1 of 5; zaps 0, 0 hit a player
