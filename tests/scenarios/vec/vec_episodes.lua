-- vec_episodes.lua: episodes whose rows end at different steps, for the polis_vec episode
-- statistics. Agent 0 is terminated at a tick drawn at each reset from the env's generator
-- (its other agents run to max_steps), and every agent earns a reward drawn each step.
local stop = 0

polis.on("reset", function()
  stop = polis.random(1, 5)
end)

polis.on("end", function()
  if polis.tick() == stop then polis.terminate(0) end
end)

polis.reward("drawn", function(agent)
  return polis.random(0, 8) * 0.125 - 0.25 * agent
end)
