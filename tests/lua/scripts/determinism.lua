-- scenario: {"agents": 2, "max_steps": 3}
-- episodes: 2
-- determinism: 7 8
-- math.random draws from the env generator: the same seed gives the same numbers in any
-- env, a different seed different ones.
polis.on("begin", function()
  polis.log(math.random(), math.random(10), polis.random(-5, 5), math.random(0))
end)
polis.on("reset", function() polis.log("reset", math.random(1000000)) end)
