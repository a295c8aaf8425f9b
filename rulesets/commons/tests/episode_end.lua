-- scenario: {"agents": 1, "max_steps": 100, "scripts": [{"path": "../commons.lua", "params": {"map": "WWWW\nW0PW\nWWWW", "facing": "north", "shuffle_order": false, "end_min_steps": 3, "regrowth_p1": 0, "regrowth_p2": 0, "regrowth_p3": 0, "end_interval": 2, "end_probability": 1.0}}, {"path": "episode_end.lua"}]}
-- episodes: 2
-- dump: done
-- From end_min_steps on, at every step count that is a multiple of end_interval, the
-- episode ends with probability end_probability (here 1): the first such count >= 3 is 4,
-- so every episode ends (terminated, not truncated) after 4 steps.
polis.subscribe("commons.episode", function(ev)
  polis.log(string.format("episode event: steps %d ended %d", ev.steps, ev.ended))
end)
-- expect: t0 done: term 0 trunc 0
-- expect: t1 done: term 0 trunc 0
-- expect: t2 done: term 0 trunc 0
-- expect: t3 done: term 0 trunc 0
-- expect: episode event: steps 4 ended 1
-- expect: [commons] episode 1 ended after 4 steps: per-capita return 0.00, focal 0.00 (agent 0), background none; apples left 0 of 0; patches depleted 0 of 0; zaps 0, 0 hit a player
-- expect: t4 done: term 1 trunc 0
-- expect: t0 done: term 0 trunc 0
-- expect: t1 done: term 0 trunc 0
-- expect: t2 done: term 0 trunc 0
-- expect: t3 done: term 0 trunc 0
-- expect: episode event: steps 4 ended 1
-- expect: [commons] episode 2 ended after 4 steps: per-capita return 0.00, focal 0.00 (agent 0), background none; apples left 0 of 0; patches depleted 0 of 0; zaps 0, 0 hit a player
-- expect: t4 done: term 1 trunc 0
