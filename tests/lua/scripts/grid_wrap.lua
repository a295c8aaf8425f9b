-- scenario: {"agents": 1, "max_steps": 1}
-- A script may size the grid itself; on a torus coordinates wrap around.
polis.grid_configure(5, 4, true)
local l = polis.grid_layer("marks")
polis.on("reset", function()
  polis.log("size", polis.grid_size())
  polis.grid_set(l, -1, 9, 42)
  polis.log("wrapped", polis.grid_get(l, 4, 1), polis.grid_get(l, 9, -3))
end)
-- expect: size 5 4 true
-- expect: wrapped 42 42
