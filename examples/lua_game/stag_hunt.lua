-- stag_hunt.lua: a small complete game in Lua, the example of docs/lua.md.
--
-- Hunters walk a walled arena. Stepping onto a hare catches it (hare_value). The stag
-- cannot be entered: it is caught when at least `hunters` players stand next to it
-- (north, south, east or west) at the end of a step, and each of them gets stag_value.
-- Caught prey comes back `respawn` steps later where it started (a hare may come back under
-- a player, who catches it by stepping off and on again; the stag waits for its cell to be
-- free). Copy this file and
-- stag_hunt.json to start a game of your own.
local grid = polis.require("grid")
local timers = polis.require("timers")

local p = polis.params{
  {key = "map", type = "string", doc = "W wall, . floor, P player start, H hare, S stag",
   default = "WWWWWWWWW\nWP..H..PW\nW.......W\nWH..S..HW\nW.......W\nWP..H..PW\nWWWWWWWWW"},
  {key = "hare_value", type = "double", default = 1, min = -100, max = 100,
   doc = "reward for catching a hare"},
  {key = "stag_value", type = "double", default = 4, min = -100, max = 100,
   doc = "reward for each hunter next to the stag when it is caught"},
  {key = "hunters", type = "int", default = 2, min = 1, max = 64,
   doc = "players needed next to the stag to catch it"},
  {key = "respawn", type = "int", default = 10, min = 1, max = 100000,
   doc = "steps before caught prey comes back"},
  {key = "view", type = "int", default = 2, min = 0, max = 16, doc = "view radius"},
}

local map = grid.parse_map(p.map, "W.PHS")
local W, H = map.width, map.height
local starts = map.cells["P"] or {}
if #starts < polis.n_agents() then
  error(string.format("params.map: %d players but %d 'P' cells", polis.n_agents(), #starts), 0)
end
polis.grid_configure(W, H)
-- The layer holds what an observation shows: the game keeps it up to date, and the
-- observation writer copies windows of it in C (polis.grid_view).
local VIEW = polis.grid_layer("stag_hunt.view")
local FLOOR, WALL, HARE, STAG, PLAYER, SELF = 1, 2, 3, 4, 5, 6

local px, py = {}, {}           -- players, by agent id
local hare_at = {}              -- "x,y" -> true while a hare is there
local stag_x, stag_y = nil, nil -- nil while the stag is away
local reward = {}               -- this step's reward of each agent
local later = timers.new()

polis.event("stag_hunt.caught", {{"agent", "i32"}, {"prey", "i32"}, {"x", "i32"}, {"y", "i32"}})
local HARE_ID, STAG_ID = 1, 2

local function key(x, y) return x .. "," .. y end
local function occupant(x, y)
  for a = 0, polis.n_agents() - 1 do
    if px[a] == x and py[a] == y then return a end
  end
end
local function paint(x, y)
  local v = FLOOR
  if map.char(x, y) == "W" then v = WALL
  elseif occupant(x, y) then v = PLAYER
  elseif stag_x == x and stag_y == y then v = STAG
  elseif hare_at[key(x, y)] then v = HARE end
  polis.grid_set(VIEW, x, y, v)
end

local function hare_back(c)
  hare_at[key(c[1], c[2])] = true
  paint(c[1], c[2])
end
local stag_back
stag_back = function()
  local s = map.cells["S"][1]
  if occupant(s[1], s[2]) then
    later:at(polis.tick() + 1, stag_back) -- someone stands there: try again next step
    return
  end
  stag_x, stag_y = s[1], s[2]
  paint(stag_x, stag_y)
end

polis.on("reset", function()
  later:clear()
  hare_at, stag_x, stag_y = {}, nil, nil
  for a = 0, polis.n_agents() - 1 do px[a], py[a] = starts[a + 1][1], starts[a + 1][2] end
  for _, c in ipairs(map.cells["H"] or {}) do hare_at[key(c[1], c[2])] = true end
  if map.cells["S"] then stag_back() end
  for y = 0, H - 1 do
    for x = 0, W - 1 do paint(x, y) end
  end
end)

polis.on("begin", function()
  for a = 0, polis.n_agents() - 1 do reward[a] = 0 end
end)

-- Moves: handlers run one agent at a time, in id order, and act at once.
for dir = grid.NORTH, grid.WEST do
  local name = grid.FACINGS[dir]
  polis.action{name = name, doc = "move one cell " .. name, handler = function(a)
    local x, y = px[a] + grid.FX[dir], py[a] + grid.FY[dir]
    if map.char(x, y) == "W" or occupant(x, y) or (stag_x == x and stag_y == y) then
      return -- blocked: a no-op, not an illegal action
    end
    local ox, oy = px[a], py[a]
    px[a], py[a] = x, y
    paint(ox, oy)
    if hare_at[key(x, y)] then
      hare_at[key(x, y)] = nil
      reward[a] = reward[a] + p.hare_value
      polis.publish("stag_hunt.caught", {agent = a, prey = HARE_ID, x = x, y = y})
      later:at(polis.tick() + p.respawn, hare_back, {x, y})
    end
    paint(x, y)
  end}
end

-- After every move: is the stag surrounded?
polis.on("resolve", function()
  if stag_x then
    local around = {}
    for d = 0, 3 do
      local a = occupant(stag_x + grid.FX[d], stag_y + grid.FY[d])
      if a then around[#around + 1] = a end
    end
    if #around >= p.hunters then
      table.sort(around)
      for _, a in ipairs(around) do
        reward[a] = reward[a] + p.stag_value
        polis.publish("stag_hunt.caught", {agent = a, prey = STAG_ID, x = stag_x, y = stag_y})
      end
      local x, y = stag_x, stag_y
      stag_x, stag_y = nil, nil
      paint(x, y)
      later:at(polis.tick() + p.respawn, stag_back)
    end
  end
  later:run(polis.tick())
end)

polis.reward("catch", function(a) return reward[a] end)

local R = p.view
polis.observation{
  name = "view", dtype = "u8", shape = {2 * R + 1, 2 * R + 1}, range = {0, SELF},
  doc = "cells around the player, north up: 0 outside, 1 floor, 2 wall, 3 hare, 4 stag, " ..
        "5 player, 6 self",
  write = function(a, buf)
    polis.grid_view(buf, VIEW, px[a], py[a], grid.NORTH, R, R, R, R)
    buf[R * (2 * R + 1) + R + 1] = SELF
  end,
}

-- What a recording, the replay and the viewer draw (docs/lua.md, "Looks"): without this the
-- game plays the same, but its recordings have no map. The walls and floor never change, so
-- the ground layer is kept and written once per episode (fresh); prey is drawn every scene.
local LOOK
LOOK = polis.look{
  kinds = {{name = "floor", glyph = ".", color = "#d9cfb8"},
           {name = "wall", glyph = "#", color = "#4a4a4a"},
           {name = "hare", glyph = "h", color = "#b08050", shape = "circle"},
           {name = "stag", glyph = "S", color = "#8a5a2a", shape = "diamond"}},
  layers = {"ground", "prey"},
  keep = {"ground"},
  view = {R, R},
  scene = function(s, fresh)
    local K = LOOK.kinds
    for y = 0, H - 1 do
      for x = 0, W - 1 do
        if fresh then s:tile("ground", x, y, map.char(x, y) == "W" and K.wall or K.floor) end
        if hare_at[key(x, y)] then s:tile("prey", x, y, K.hare) end
      end
    end
    if stag_x then s:tile("prey", stag_x, stag_y, K.stag) end
    for a = 0, polis.n_agents() - 1 do s:agent(a, px[a], py[a]) end
  end,
}

polis.renderer("text", function(a)
  local lines = {string.format("You are %s at (%d, %d); x grows east, y grows south. Step %d.",
                               polis.agent_name(a), px[a], py[a], polis.tick())}
  if stag_x then
    lines[#lines + 1] = string.format("The stag is at (%d, %d): %d hunters next to it catch it.",
                                      stag_x, stag_y, p.hunters)
  else
    lines[#lines + 1] = "The stag is away."
  end
  local hares = {}
  for y = 0, H - 1 do
    for x = 0, W - 1 do
      if hare_at[key(x, y)] then hares[#hares + 1] = string.format("(%d, %d)", x, y) end
    end
  end
  lines[#lines + 1] = "Hares: " .. (#hares > 0 and table.concat(hares, ", ") or "none") .. "."
  return table.concat(lines, "\n") .. "\n"
end)

polis.action_parser(function(a, input)
  local dir = input:lower():match("^go (%a+)$") or input:lower():match("^move (%a+)$")
  if not dir then return nil end
  if not grid.facing(dir) or #dir < 4 then
    error("'" .. dir .. "' is not north, east, south or west", 0)
  end
  return dir
end)
