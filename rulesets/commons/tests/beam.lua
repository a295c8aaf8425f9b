-- scenario: {"agents": 7, "max_steps": 2, "scripts": [{"path": "../commons.lua", "params": {"map": "WWWWWWWWW\nW...2..PW\nW...4...W\nW..15...W\nW.6.....W\nW...03..W\nWWWWWWWWW", "facing": "north", "shuffle_order": false, "end_min_steps": 1000000, "regrowth_p1": 0, "regrowth_p2": 0, "regrowth_p3": 0, "beam_length": 3, "beam_radius": 1, "zap_cooldown": 2, "respawn_delay": 4}}, {"path": "beam.lua"}]}
-- actions 1: fire_zap
-- Melting Pot's beam (open: length 3, radius 1) from agent 0 at (4, 5) facing north covers
-- (3,5) (3,4) (3,3) on the left, (5,5) (5,4) (5,3) on the right and (4,4) (4,3) (4,2) in
-- the centre. Agent 1 (left line, 3rd cell) and agent 3 (right line, 1st cell) are hit;
-- agent 5 (centre, 2nd cell) is hit and shields agent 4 behind it; agent 2 (centre, beyond
-- the length) and agent 6 (beside the footprint) are not. Hit players leave the map.
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
polis.subscribe("commons.zap", function(ev)
  polis.log(string.format("zap by %d at %d,%d facing %d hits %d", ev.agent, ev.x, ev.y,
                          ev.facing, ev.hits))
end)
polis.subscribe("commons.hit", function(ev)
  polis.log(string.format("hit %d by %d at %d,%d", ev.target, ev.agent, ev.x, ev.y))
end)
polis.on("end", function() polis.log("on the map", positions()) end)
-- expect: zap by 0 at 4,5 facing 0 hits 3
-- expect: hit 1 by 0 at 3,3
-- expect: hit 3 by 0 at 5,5
-- expect: hit 5 by 0 at 4,3
-- expect: on the map 0:4,5 2:4,1 4:4,2 6:2,4
-- expect: [commons] episode 1 reached max_steps after 2 steps: per-capita return 0.00, focal 0.00 (agents 0-6), background none; apples left 0 of 0; patches depleted 0 of 0; zaps 1, 1 hit a player
-- expect: on the map 0:4,5 2:4,1 4:4,2 6:2,4
