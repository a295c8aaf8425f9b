-- grid: facing, relative moves, ASCII maps, discs, beams and spawn groups for grid games.
--
-- Load it with `local grid = polis.require("grid")` (docs/lua.md). Coordinates are the
-- kernel's: x grows east, y grows south, (0, 0) is the top-left cell. Facings are integers,
-- NORTH = 0, EAST = 1, SOUTH = 2, WEST = 3, so turning is arithmetic modulo 4.
--
-- Nothing here keeps state or draws random numbers except pick_free (polis.random), so the
-- functions are safe to call from any callback.
local grid = {}

grid.NORTH, grid.EAST, grid.SOUTH, grid.WEST = 0, 1, 2, 3
grid.FACINGS = {[0] = "north", "east", "south", "west"}

-- Unit vectors of each facing.
local FX = {[0] = 0, 1, 0, -1}
local FY = {[0] = -1, 0, 1, 0}
grid.FX, grid.FY = FX, FY

local FACING_BY_NAME = {north = 0, east = 1, south = 2, west = 3, n = 0, e = 1, s = 2, w = 3}

-- The facing named `name` ("north", "n", ..., case-insensitive), or nil.
function grid.facing(name)
  return FACING_BY_NAME[string.lower(name)]
end

-- `facing` turned by `quarter_turns` (positive = clockwise, i.e. to the right).
function grid.turn(facing, quarter_turns)
  return (facing + quarter_turns) % 4
end

-- The offset of a cell `ahead` cells in front and `right` cells to the right of an agent
-- facing `facing` (negative values go behind and to the left).
function grid.relative(facing, ahead, right)
  local r = (facing + 1) % 4
  return FX[facing] * ahead + FX[r] * right, FY[facing] * ahead + FY[r] * right
end

-- The absolute facing of a move relative to `facing`: rel 0 forward, 1 right, 2 backward,
-- 3 left; and the relative move that goes in absolute direction `dir`.
function grid.absolute(facing, rel)
  return (facing + rel) % 4
end

function grid.relative_move(facing, dir)
  return (dir - facing) % 4
end

-- The offsets {dx, dy} of the cells at Euclidean distance <= radius from a cell, in row
-- order; the centre is included only when `with_centre` is true.
function grid.disc(radius, with_centre)
  local out = {}
  local r = math.floor(radius)
  for dy = -r, r do
    for dx = -r, r do
      if dx * dx + dy * dy <= radius * radius and (with_centre or dx ~= 0 or dy ~= 0) then
        out[#out + 1] = {dx, dy}
      end
    end
  end
  return out
end

-- Parses an ASCII map: rows separated by "\n" (a leading and a trailing newline are
-- ignored), every row the same length. Returns a table with `width`, `height`,
-- `char(x, y)` and `cells[c]`, the list of {x, y} of each character c in row order.
-- `allowed` (optional) is a string of the characters the map may use. Errors name the row
-- and column (1-based, as an editor shows them).
function grid.parse_map(text, allowed)
  if type(text) ~= "string" then
    error("grid.parse_map: the map must be a string, got " .. type(text), 2)
  end
  text = text:gsub("^\n", ""):gsub("\n$", "")
  local rows = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do rows[#rows + 1] = line end
  if #rows == 0 or #rows[1] == 0 then error("grid.parse_map: the map is empty", 2) end
  local width = #rows[1]
  local cells = {}
  for y, row in ipairs(rows) do
    if #row ~= width then
      error(string.format("grid.parse_map: row %d has %d characters, row 1 has %d", y, #row,
                          width), 2)
    end
    for x = 1, width do
      local c = row:sub(x, x)
      if allowed and not allowed:find(c, 1, true) then
        error(string.format("grid.parse_map: row %d, column %d: unknown character '%s' " ..
                            "(the map may use \"%s\")", y, x, c, allowed), 2)
      end
      local list = cells[c]
      if not list then
        list = {}
        cells[c] = list
      end
      list[#list + 1] = {x - 1, y - 1}
    end
  end
  return {
    width = width,
    height = #rows,
    rows = rows,
    cells = cells,
    char = function(x, y) return rows[y + 1]:sub(x + 1, x + 1) end,
  }
end

-- The lines of a beam the way DeepMind Lab2D's hitBeam traces them (grid.cc,
-- HitBeamActual), as offsets from the firing cell: for each side (left, then right) and
-- r = 1..radius, a line starts r cells to the side, level with the firer, and runs
-- `length - r + 1` cells forward; then the centre line starts one cell in front and runs
-- `length` cells. Each line is {side = -1 (left), 1 (right) or 0 (centre), r = r, n = cells,
-- dx = {...}, dy = {...}}. A side line stopped at its first cell also stops the wider lines
-- on its side. Precompute the lines once per facing when beams are traced often.
function grid.beam_lines(facing, length, radius)
  local fx, fy = FX[facing], FY[facing]
  local lines = {}
  for side = -1, 1, 2 do
    local sx, sy = grid.relative(facing, 0, side)
    for r = 1, radius do
      local line = {side = side, r = r, n = 0, dx = {}, dy = {}}
      for i = 0, length - r do
        line.n = line.n + 1
        line.dx[line.n], line.dy[line.n] = sx * r + fx * i, sy * r + fy * i
      end
      lines[#lines + 1] = line
    end
  end
  local centre = {side = 0, r = 0, n = 0, dx = {}, dy = {}}
  for i = 1, length do
    centre.n = i
    centre.dx[i], centre.dy[i] = fx * i, fy * i
  end
  lines[#lines + 1] = centre
  return lines
end

-- Traces a beam from (x, y) along `lines` (from beam_lines): hit(cx, cy) is called for each
-- cell in order and returns true when the beam stops there (a wall, the edge of the map,
-- the first player it hits).
function grid.trace(lines, x, y, hit)
  local stopped_left, stopped_right = false, false
  for k = 1, #lines do
    local line = lines[k]
    local side = line.side
    if not (side == -1 and stopped_left or side == 1 and stopped_right) then
      local dx, dy = line.dx, line.dy
      for i = 1, line.n do
        if hit(x + dx[i], y + dy[i]) then
          if i == 1 then
            if side == -1 then stopped_left = true elseif side == 1 then stopped_right = true end
          end
          break
        end
      end
    end
  end
end

-- beam_lines and trace in one call.
function grid.beam(x, y, facing, length, radius, hit)
  grid.trace(grid.beam_lines(facing, length, radius), x, y, hit)
end

-- The cells an unobstructed beam covers, as a list of {x, y} in trace order.
function grid.beam_cells(x, y, facing, length, radius)
  local out = {}
  grid.beam(x, y, facing, length, radius, function(cx, cy)
    out[#out + 1] = {cx, cy}
    return false
  end)
  return out
end

-- Calls fn(row, col, cx, cy) for each cell of an egocentric window: `ahead` rows in front
-- of (x, y), its own row, `behind` rows behind, each from `left` cells to the left to
-- `right` cells to the right, rows and columns 0-based from the far left corner, as an
-- agent facing up would see them. This is what polis.grid_view copies in C.
function grid.window(x, y, facing, ahead, behind, left, right, fn)
  for row = 0, ahead + behind do
    for col = 0, left + right do
      local dx, dy = grid.relative(facing, ahead - row, col - left)
      fn(row, col, x + dx, y + dy)
    end
  end
end

-- A spawn group: picks uniformly (polis.random) one of the points {x, y} for which
-- is_free(x, y) is true, and returns its index, or nil when none is free.
function grid.pick_free(points, is_free)
  local free, n = {}, 0
  for i = 1, #points do
    local p = points[i]
    if is_free(p[1], p[2]) then
      n = n + 1
      free[n] = i
    end
  end
  if n == 0 then return nil end
  return free[polis.random(n)]
end

-- Groups cells {x, y} into clusters: two cells are in the same cluster when a chain of
-- cells each within Euclidean distance `radius` of the next joins them. Returns an array
-- giving each cell's cluster number (1, 2, ... in the order of the clusters' first cells)
-- and the number of clusters. It compares every pair (n^2 / 2 distance tests): for a few
-- hundred cells; with more, join neighbours found through a disc (as commons.lua does).
function grid.clusters(cells, radius)
  local parent = {}
  for i = 1, #cells do parent[i] = i end
  local function find(i)
    while parent[i] ~= i do
      parent[i] = parent[parent[i]]
      i = parent[i]
    end
    return i
  end
  local r2 = radius * radius
  for i = 1, #cells do
    for j = i + 1, #cells do
      local dx, dy = cells[i][1] - cells[j][1], cells[i][2] - cells[j][2]
      if dx * dx + dy * dy <= r2 then
        local a, b = find(i), find(j)
        if a ~= b then parent[math.max(a, b)] = math.min(a, b) end
      end
    end
  end
  local ids, n, out = {}, 0, {}
  for i = 1, #cells do
    local root = find(i)
    if not ids[root] then
      n = n + 1
      ids[root] = n
    end
    out[i] = ids[root]
  end
  return out, n
end

return grid
