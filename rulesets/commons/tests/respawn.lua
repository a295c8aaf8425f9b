-- scenario: {"agents": 2, "max_steps": 6, "scripts": [{"path": "../commons.lua", "params": {"map": "WWWWWWW\nW.....W\nW..1..W\nW..0..W\nWP....W\nWWWWWWW", "facing": "north", "shuffle_order": false, "end_min_steps": 1000000, "regrowth_p1": 0, "regrowth_p2": 0, "regrowth_p3": 0, "beam_length": 3, "beam_radius": 1, "zap_cooldown": 2, "respawn_delay": 3, "view_ahead": 1, "view_behind": 0, "view_side": 0}}, {"path": "respawn.lua"}]}
-- actions 1: fire_zap
-- actions 2: fire_zap
-- actions 3: fire_zap
-- actions 4: fire_zap
-- actions 5: fire_zap
-- actions 6: fire_zap
-- dump: obs
-- Agent 0 fires every step. Cooldown 2: the beam fires at steps 0, 3, 6, ... (Melting
-- Pot's timer is set to 2 and counts down once per step before it can fire again), and
-- READY_TO_SHOOT reads 0, 0.5, 1 in between. Agent 1, hit at step 0 with respawn_delay 3,
-- is off the map (a zero view, READY_TO_SHOOT 0) until it reappears at step 0 + 3 + 1 = 4
-- on the only outer spawn point. The view is 2 cells: the one in front, the player's own.
polis.subscribe("commons.zap", function(ev)
  polis.log(string.format("zap by %d hits %d at step %d", ev.agent, ev.hits, ev.tick))
end)
polis.subscribe("commons.hit", function(ev)
  polis.log(string.format("hit %d by %d at %d,%d at step %d", ev.target, ev.agent, ev.x, ev.y,
                          ev.tick))
end)
polis.subscribe("commons.respawn", function(ev)
  polis.log(string.format("respawn %d at %d,%d at step %d", ev.agent, ev.x, ev.y, ev.tick))
end)
-- expect: t0 obs view a0: 8 6
-- expect: t0 obs view a1: 1 6
-- expect: t0 obs READY_TO_SHOOT a0: 1
-- expect: t0 obs READY_TO_SHOOT a1: 1
-- expect: zap by 0 hits 1 at step 0
-- expect: hit 1 by 0 at 3,2 at step 0
-- expect: t1 obs view a0: 1 6
-- expect: t1 obs view a1: 0 0
-- expect: t1 obs READY_TO_SHOOT a0: 0
-- expect: t1 obs READY_TO_SHOOT a1: 0
-- expect: t2 obs view a0: 1 6
-- expect: t2 obs view a1: 0 0
-- expect: t2 obs READY_TO_SHOOT a0: 0.5
-- expect: t2 obs READY_TO_SHOOT a1: 0
-- expect: t3 obs view a0: 1 6
-- expect: t3 obs view a1: 0 0
-- expect: t3 obs READY_TO_SHOOT a0: 1
-- expect: t3 obs READY_TO_SHOOT a1: 0
-- expect: zap by 0 hits 0 at step 3
-- expect: t4 obs view a0: 1 6
-- expect: t4 obs view a1: 0 0
-- expect: t4 obs READY_TO_SHOOT a0: 0
-- expect: t4 obs READY_TO_SHOOT a1: 0
-- expect: respawn 1 at 1,4 at step 4
-- expect: t5 obs view a0: 1 6
-- expect: t5 obs view a1: 1 6
-- expect: t5 obs READY_TO_SHOOT a0: 0.5
-- expect: t5 obs READY_TO_SHOOT a1: 1
-- expect: [commons] episode 1 reached max_steps after 6 steps: per-capita return 0.00, focal 0.00 (agents 0-1), background none; apples left 0 of 0; patches depleted 0 of 0; zaps 2, 1 hit a player
-- expect: t6 obs view a0: 1 6
-- expect: t6 obs view a1: 1 6
-- expect: t6 obs READY_TO_SHOOT a0: 1
-- expect: t6 obs READY_TO_SHOOT a1: 1
