-- checkers.lua: a board whose every cell changes at every tick, for the recorder's tile diff.
-- A 12 x 12 layer "paint" (not kept) shows a checkerboard that flips at each tick, so a step
-- line holds all 144 cells: 72 painted, 72 cleared (more than a line keeps as raw values).
-- A second layer "marks" changes one cell a tick. No actions but noop, no rewards.
local W, H = 12, 12
polis.grid_configure(W, H)
local LOOK
LOOK = polis.look{
  kinds = {{name = "black", glyph = "b", color = "#202020"},
           {name = "mark", glyph = "m", color = "#c03030", shape = "dot"}},
  layers = {"paint", "marks"},
  scene = function(s, fresh)
    local t = polis.tick()
    for y = 0, H - 1 do
      for x = 0, W - 1 do
        if (x + y + t) % 2 == 0 then s:tile("paint", x, y, LOOK.kinds.black) end
      end
    end
    s:tile("marks", t % W, (t // W) % H, LOOK.kinds.mark)
    for a = 0, polis.n_agents() - 1 do s:agent(a, a, 0) end
  end,
}
