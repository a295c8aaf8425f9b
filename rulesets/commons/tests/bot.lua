-- scenario: {"agents": 2, "max_steps": 4, "scripts": [{"path": "../commons.lua", "params": {"map": "WWWWWWW\nW..A..W\nW..0..W\nW..1..W\nWP....W\nWWWWWWW", "facing": "north", "shuffle_order": false, "end_min_steps": 1000000, "regrowth_p1": 0, "regrowth_p2": 0, "regrowth_p3": 0, "background": "1", "background_bot": "free", "beam_length": 3, "beam_radius": 1, "zap_cooldown": 2, "respawn_delay": 100}}, {"path": "bot.lua"}]}
-- actions 2: noop turn_left
-- actions 3: noop fire_zap
-- Agent 1 is a background "free" bot the game plays itself: the host's actions for it are
-- ignored. At step 0 its beam is ready and agent 0 stands in it: it zaps. Then, recharging,
-- it walks to the nearest apple (north, through the cell agent 0 left) and eats it.
polis.subscribe("commons.zap", function(ev)
  polis.log(string.format("zap by %d hits %d at step %d", ev.agent, ev.hits, ev.tick))
end)
polis.subscribe("commons.eat", function(ev)
  polis.log(string.format("eat %d at %d,%d at step %d", ev.agent, ev.x, ev.y, ev.tick))
end)
-- expect: zap by 1 hits 1 at step 0
-- expect: eat 1 at 3,1 at step 2
-- expect: [commons] episode 1 reached max_steps after 4 steps: per-capita return 0.50, focal 0.00 (agent 0), background 1.00 (agent 1, free bots); apples left 0 of 1; patches depleted 1 of 1; zaps 1, 1 hit a player
