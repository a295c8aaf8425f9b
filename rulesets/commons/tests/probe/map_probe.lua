-- map_probe.lua: logs the commons view layer as text after every reset, for test_commons.c:
-- '#' wall, '.' floor, 'A' apple, 'g' grass, 'd' dead grass, '0'-'9' a player (its id % 10).
local VIEW = polis.grid_layer("commons.view")
local CHARS = {[1] = ".", [2] = "#", [3] = "A", [4] = "g", [5] = "d"}
polis.on("reset", function()
  local w, h = polis.grid_size()
  for y = 0, h - 1 do
    local row = {}
    for x = 0, w - 1 do
      local v = polis.grid_get(VIEW, x, y)
      row[#row + 1] = CHARS[v] or (v >= 7 and tostring((v - 7) % 10)) or "?"
    end
    polis.log("row " .. table.concat(row))
  end
end)
