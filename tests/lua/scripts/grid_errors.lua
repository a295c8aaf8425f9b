-- scenario: {"agents": 1, "max_steps": 2, "grid": {"width": 4, "height": 4}}
-- episodes: 2
-- on-error: reset
-- An uncaught grid error names the script line, the coordinates, the hook and the tick.
local l = polis.grid_layer("l")
polis.on("world", function()
  if polis.episode() == 1 and polis.tick() == 1 then
    polis.grid_set(l, 2, 4, 1)
  end
  polis.log("world", polis.episode(), polis.tick())
end)
-- expect: world 1 0
-- expect error: step: script error: grid_errors: grid_errors.lua:8: polis.grid_set: (2, 4) is outside the 4x4 grid [hook world, tick 1]
-- expect: world 2 0
-- expect: world 2 1
