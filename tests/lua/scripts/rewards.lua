-- scenario: {"agents": 3, "max_steps": 2, "rewards": {"base": 2.0}}
-- dump: rewards
-- Reward functions are called per agent and summed with the scenario's weights (default 1);
-- transforms then run by priority on the summed rewards, in place, through a view indexed
-- by agent id (0-based, #rewards = agents).
polis.reward("base", function(agent) return agent + 1 end)
polis.reward("bonus", function(agent)
  if agent == 0 then return 3 end
  return 0
end)
polis.reward_transform("mean", 10, function(r)
  local sum = 0
  for a = 0, #r - 1 do sum = sum + r[a] end
  for a = 0, #r - 1 do r[a] = sum / #r end
end)
polis.reward_transform("peek", function(r)
  polis.log("before mean", #r, r[0], r[1], r[2])
end)
-- expect: t0 rewards: 0 0 0
-- expect: before mean 3 5.0 4.0 6.0
-- expect: t1 rewards: 5 5 5
-- expect: before mean 3 5.0 4.0 6.0
-- expect: t2 rewards: 5 5 5
