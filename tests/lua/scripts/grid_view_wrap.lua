-- scenario: {"agents": 2, "max_steps": 1, "grid": {"width": 4, "height": 3, "wrap": true}}
-- steps: 0
-- dump: obs
-- On a torus polis.grid_view wraps around the edges instead of reading `outside`.
local L = polis.grid_layer("v")
polis.on("reset", function()
  for y = 0, 2 do
    for x = 0, 3 do polis.grid_set(L, x, y, y * 10 + x + 1) end
  end
end)
polis.observation{name = "w", dtype = "i16", shape = {3, 3}, write = function(a, buf)
  polis.grid_view(buf, L, 0, 0, a, 1, 1, 1, 1, -7)
end}
-- expect: t0 obs w a0: 24 21 22 4 1 2 14 11 12
-- expect: t0 obs w a1: 22 2 12 21 1 11 24 4 14
