-- scenario: {"agents": 5, "max_steps": 2, "scripts": [{"path": "../commons.lua", "params": {"map": "WWWWWWWWW\nW..1....W\nW.W.....W\nW.0...4.W\nW...W3..W\nW...2..PW\nWWWWWWWWW", "facing": "north", "shuffle_order": false, "end_min_steps": 1000000, "regrowth_p1": 0, "regrowth_p2": 0, "regrowth_p3": 0, "beam_length": 4, "beam_radius": 2, "zap_cooldown": 1, "respawn_delay": 100}}, {"path": "beam_walls.lua"}]}
-- actions 1: turn_right
-- actions 2: fire_zap
-- Agent 0 at (2, 3) turns to face east and fires a beam of length 4 and radius 2. The wall
-- at (2, 2) stops the left r = 1 line at its first cell, so the r = 2 line on that side is
-- not traced and agent 1 at (3, 1) is safe. On the right the wall at (4, 4) stops the r = 1
-- line after two cells (agent 3 behind it is safe) but the r = 2 line goes on and hits
-- agent 2 at (4, 5); the centre line hits agent 4 at its 4th cell.
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
  polis.log(string.format("zap by %d at %d,%d facing %d hits %d at step %d", ev.agent, ev.x,
                          ev.y, ev.facing, ev.hits, ev.tick))
end)
polis.subscribe("commons.hit", function(ev)
  polis.log(string.format("hit %d by %d at %d,%d", ev.target, ev.agent, ev.x, ev.y))
end)
-- expect: zap by 0 at 2,3 facing 1 hits 2 at step 1
-- expect: hit 2 by 0 at 4,5
-- expect: hit 4 by 0 at 6,3
-- expect: [commons] episode 1 reached max_steps after 2 steps: per-capita return 0.00, focal 0.00 (agents 0-4), background none; apples left 0 of 0; patches depleted 0 of 0; zaps 1, 1 hit a player
