-- scenario: {"agents": 2, "max_steps": 8, "scripts": [{"path": "../commons.lua", "params": {"map": "WWWWWWW\nW.A...W\nW.0A.1W\nW..A..W\nWP....W\nWWWWWWW", "facing": "east", "shuffle_order": false, "end_min_steps": 1000000, "regrowth_p1": 0, "regrowth_p2": 0, "regrowth_p3": 0}}, {"path": "moves.lua"}]}
-- actions 1: forward noop
-- actions 2: step_right noop
-- actions 3: step_left backward
-- actions 4: turn_left backward
-- actions 5: step_left noop
-- actions 6: forward noop
-- actions 7: forward noop
-- actions 8: backward noop
-- dump: rewards
-- Both players face east. Moves are relative to the facing: forward (east), step_right
-- (south), step_left (north), backward (west); after turn_left agent 0 faces north, so
-- step_left goes west. Entering a cell with an apple eats it (+1); walls and other players
-- block (agent 1's backward at step 4 runs into agent 0). Players move in id order here
-- (shuffle_order false). The three apples form one patch, depleted at step 6.
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
polis.subscribe("commons.eat", function(ev)
  polis.log(string.format("eat %d at %d,%d remaining %d", ev.agent, ev.x, ev.y, ev.remaining))
end)
polis.subscribe("commons.depleted", function(ev)
  polis.log(string.format("patch %d depleted at %d,%d, %d left", ev.patch, ev.x, ev.y,
                          ev.remaining))
end)
polis.on("end", function() polis.log("at", positions()) end)
-- expect: t0 rewards: 0 0
-- expect: eat 0 at 3,2 remaining 2
-- expect: at 0:3,2 1:5,2
-- expect: t1 rewards: 1 0
-- expect: eat 0 at 3,3 remaining 1
-- expect: at 0:3,3 1:5,2
-- expect: t2 rewards: 1 0
-- expect: at 0:3,2 1:4,2
-- expect: t3 rewards: 0 0
-- expect: at 0:3,2 1:4,2
-- expect: t4 rewards: 0 0
-- expect: at 0:2,2 1:4,2
-- expect: t5 rewards: 0 0
-- expect: eat 0 at 2,1 remaining 0
-- expect: patch 1 depleted at 3,2, 0 left
-- expect: at 0:2,1 1:4,2
-- expect: t6 rewards: 1 0
-- expect: at 0:2,1 1:4,2
-- expect: t7 rewards: 0 0
-- expect: [commons] episode 1 reached max_steps after 8 steps: per-capita return 1.50, focal 1.50 (agents 0-1), background none; apples left 0 of 3; patches depleted 1 of 1; zaps 0, 0 hit a player
-- expect: at 0:2,2 1:4,2
-- expect: t8 rewards: 0 0
