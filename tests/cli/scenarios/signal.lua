-- signal.lua: a game whose only clue is a shared observation field. Each step the env draws a
-- number 0..K-1 and shows it to every agent at once, in the shared field "signal"; an agent
-- that says it at the next step (the action say_<number>) earns 1. A policy that reads the
-- shared field scores every step, one that cannot see it about one step in K (noop: none).
local K = 4
local signal = {0}
local said, score = {}, {}
for k = 0, K - 1 do
  polis.action{name = "say_" .. k, doc = "say " .. k, handler = function(agent) said[agent] = k end}
end
polis.shared_observation{name = "signal", doc = "the number to say at the next step",
  dtype = "u8", shape = {1}, values = signal}
polis.observation{name = "me", doc = "the agent's id", dtype = "u8", shape = {1},
  write = function(agent, buf) buf[1] = agent end}
polis.reward("match", score)
polis.on("reset", function()
  for a = 0, polis.n_agents() - 1 do score[a], said[a] = 0, -1 end
  signal[1] = polis.random(K) - 1
end)
polis.on("post", function()
  for a = 0, polis.n_agents() - 1 do
    score[a] = said[a] == signal[1] and 1 or 0
    said[a] = -1
  end
  signal[1] = polis.random(K) - 1
end)
