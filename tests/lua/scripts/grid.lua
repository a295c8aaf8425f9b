-- scenario: {"agents": 1, "max_steps": 1, "grid": {"width": 4, "height": 3}}
-- episodes: 2
-- Grid layers are registered by name (the same name gives the same layer); cells are
-- cleared at every reset. A bounded grid refuses coordinates outside it.
local food = polis.grid_layer("food")
local walls = polis.grid_layer("walls")
polis.log("layers", food, walls, polis.grid_layer("food"))
polis.on("reset", function()
  polis.log("size", polis.grid_size())
  polis.log("cleared", polis.grid_get(food, 3, 2))
  polis.grid_set(food, 3, 2, 7)
  polis.grid_set(walls, 0, 0, -1)
  polis.log("get", polis.grid_get(food, 3, 2), polis.grid_get(walls, 0, 0),
            polis.grid_get(food, 0, 0))
  for _, c in ipairs{{food, 4, 0}, {food, 0, -1}, {2, 0, 0}} do
    local ok, e = pcall(polis.grid_get, table.unpack(c))
    polis.log(ok, e)
  end
  local ok, e = pcall(polis.grid_set, food, 0, 0, 2 ^ 31 // 1)
  polis.log(ok, e)
end)
-- expect: layers 0 1 0
-- expect: size 4 3 false
-- expect: cleared 0
-- expect: get 7 -1 0
-- expect: false polis.grid_get: (4, 0) is outside the 4x3 grid
-- expect: false polis.grid_get: (0, -1) is outside the 4x3 grid
-- expect: false polis.grid_get: layer 2 is not in [0, 1]
-- expect: false bad argument #4 to 'polis.grid_set' (2147483648 does not fit in 32 bits)
-- expect: size 4 3 false
-- expect: cleared 0
-- expect: get 7 -1 0
-- expect: false polis.grid_get: (4, 0) is outside the 4x3 grid
-- expect: false polis.grid_get: (0, -1) is outside the 4x3 grid
-- expect: false polis.grid_get: layer 2 is not in [0, 1]
-- expect: false bad argument #4 to 'polis.grid_set' (2147483648 does not fit in 32 bits)
