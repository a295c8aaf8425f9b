-- draws.lua: logs one draw from the env RNG after every step, so a test can see whether
-- society drew anything during the step.
polis.on("post", function()
  polis.log(tostring(polis.random(1000000)))
end)
