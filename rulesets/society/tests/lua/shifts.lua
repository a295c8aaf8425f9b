-- shifts.lua: moves the terrain mid-episode, so a test sees the scene's kept ground and
-- station layers follow the "blocks" and "recipes" grid layers: every 7th step a block
-- toggles, every 11th a cell's station becomes the first recipe or none.
local blocks = polis.grid_layer("blocks")
local recipes = polis.grid_layer("recipes")
local n = 0
polis.on("post", function()
  n = n + 1
  local w, h = polis.grid_size()
  if n % 7 == 0 then
    local x, y = (n * 5) % w, (n // w) % h
    polis.grid_set(blocks, x, y, 1 - polis.grid_get(blocks, x, y))
  end
  if n % 11 == 0 then
    local x, y = (n * 3) % w, (n // 3) % h
    polis.grid_set(recipes, x, y, (n // 11) % 2)
  end
end)
