-- commons.lua: Melting-Pot-style Commons Harvest, written only in Lua (README.md has the
-- rules; ../../shared/specs/ecosystem.md §1 is where they come from).
--
-- Layout of this file: parameters and maps; the map's precomputed geometry; world state;
-- the view layer the observation is copied from; events; apples and regrowth; players
-- (spawning, moving, eating, zapping); actions; the scripted bots; the step (reset, begin,
-- resolve, world, end hooks); metrics; observations; the text, JSON and metrics views; the
-- action parser.
local grid = polis.require("grid")
local timers = polis.require("timers")
local json = polis.require("json")

local random, grid_set, publish = polis.random, polis.grid_set, polis.publish

-- ---- parameters ---------------------------------------------------------------------------

local p = polis.params{
  {key = "map", type = "string", default = "open",
   doc = "open, closed, partnership, or an ASCII map (rows separated by newlines; README)"},
  {key = "regrowth_p0", type = "double", default = 0, min = 0, max = 1,
   doc = "regrowth probability per step of an empty apple cell with no live apple near it"},
  {key = "regrowth_p1", type = "double", default = 0.0025, min = 0, max = 1,
   doc = "... with 1 live apple within regrowth_radius"},
  {key = "regrowth_p2", type = "double", default = 0.005, min = 0, max = 1,
   doc = "... with 2 live apples within regrowth_radius"},
  {key = "regrowth_p3", type = "double", default = 0.025, min = 0, max = 1,
   doc = "... with 3 or more live apples within regrowth_radius"},
  {key = "regrowth_radius", type = "double", default = 2, min = 0, max = 8,
   doc = "Euclidean radius of the neighbourhood counted for regrowth"},
  {key = "zap_cooldown", type = "int", default = 2, min = 0, max = 1000000,
   doc = "steps after a zap before the next one can fire (Melting Pot's cooldownTime)"},
  {key = "beam_length", type = "int", default = 3, min = 0, max = 64,
   doc = "length of the zap beam (0: zapping does nothing)"},
  {key = "beam_radius", type = "int", default = 1, min = 0, max = 16,
   doc = "side lines of the beam on each side (1: a beam 3 cells wide)"},
  {key = "respawn_delay", type = "int", default = 4, min = 0, max = 1000000,
   doc = "Melting Pot's framesTillRespawn: a player zapped at step t returns at step t+N+1"},
  {key = "inner_spawns", type = "int", default = 2, min = 0, max = 65536,
   doc = "the first this many players start on the inner 'Q' spawn points"},
  {key = "end_min_steps", type = "int", default = 1000, min = 1, max = 1000000000,
   doc = "the episode may end at random from this step on"},
  {key = "end_interval", type = "int", default = 100, min = 1, max = 1000000000,
   doc = "it may end at steps that are multiples of this"},
  {key = "end_probability", type = "double", default = 0.15, min = 0, max = 1,
   doc = "chance of ending at each of those steps"},
  {key = "shuffle_order", type = "bool", default = true,
   doc = "players move in a new random order every step (as Melting Pot); false: by id"},
  {key = "facing", type = "string", default = "random",
   doc = "facing of players when they (re)spawn: random, north, east, south or west"},
  {key = "view_ahead", type = "int", default = 9, min = 0, max = 64,
   doc = "rows of the observation window in front of the player"},
  {key = "view_behind", type = "int", default = 1, min = 0, max = 64,
   doc = "rows of the observation window behind the player"},
  {key = "view_side", type = "int", default = 5, min = 0, max = 64,
   doc = "columns of the observation window on each side of the player"},
  {key = "background", type = "string", default = "",
   doc = "the background population: agent ids, ranges or names, e.g. \"2-6\" (rest: focal)"},
  {key = "background_bot", type = "string", default = "free",
   doc = "the background bot: free (harvests and zaps) or pacifist (harvests only)"},
  {key = "background_driver", type = "string", default = "game",
   doc = "game: the game plays the background bots itself; host: the host runs the policy"},
  {key = "sample_every", type = "int", default = 100, min = 0, max = 1000000000,
   doc = "publish commons.apples every this many steps (0: never)"},
  {key = "bot_every", type = "int", default = 1, min = 1, max = 1000000,
   doc = "game-driven bots move on steps t with t % bot_every == 0 and wait otherwise " ..
         "(2: once per two moves of the others, as in the Melting Pot LLM study)"},
  {key = "end_when_no_apples", type = "bool", default = false,
   doc = "end the episode (terminate everyone) when the last apple on the map is eaten"},
  {key = "study_metrics", type = "bool", default = false,
   doc = "count the LLM study's last-apple approaches (a scan of the apples per player and " ..
         "step): steps whose nearest apple was the last of its tree, and those that got closer"},
}

local MAPS = {
  open = [[
WWWWWWWWWWWWWWWWWWWWWWWW
WAAA    A      A    AAAW
WAA    AAA    AAA    AAW
WA    AAAAA  AAAAA    AW
W      AAA    AAA      W
W       A      A       W
W  A                A  W
W AAA  Q        Q  AAA W
WAAAAA            AAAAAW
W AAA              AAA W
W  A                A  W
W                      W
W                      W
W                      W
W  PPPPPPPPPPPPPPPPPP  W
W PPPPPPPPPPPPPPPPPPPP W
WPPPPPPPPPPPPPPPPPPPPPPW
WWWWWWWWWWWWWWWWWWWWWWWW]],
  closed = [[
WWWWWWWWWWWWWWWWWWWWWWWW
WAAA    A  WW  A    AAAW
WAA    AAA WW AAA    AAW
WA    AAAAAWWAAAAA    AW
W      AAA WW AAA      W
W       A  WW  A       W
W  A       WW       A  W
W AAA  Q   WW   Q  AAA W
WAAAAA     WW     AAAAAW
W AAA  WWWWWWWWWW  AAA W
W  A       WW       A  W
WWWWWWWWWW WW WWWWWWWWWW
W          WW          W
W  WWWWWWWWWWWWWWWWWW  W
W  PPPPPPPPPPPPPPPPPP  W
W PPPPPPPPPPPPPPPPPPPP W
WPPPPPPPPPPPPPPPPPPPPPPW
WWWWWWWWWWWWWWWWWWWWWWWW]],
  partnership = [[
WWWWWWWWWWWWWWWWWWWWWWWW
WAAA    A  II  A    AAAW
WAA    AAA II AAA    AAW
WA    AAAAAIIAAAAA    AW
W      AAA II AAA      W
W       A  II  A       W
W  A       II       A  W
W AAA  Q   WW   Q  AAA W
WAAAAA     II     AAAAAW
W AAA  WWWWWWWWWW  AAA W
W  A       WW       A  W
WWWWWWWWWW WW WWWWWWWWWW
W          WW          W
W  WWWWWWWWWWWWWWWWWW  W
W  PPPPPPPPPPPPPPPPPP  W
W PPPPPPPPPPPPPPPPPPPP W
WPPPPPPPPPPPPPPPPPPPPPPW
WWWWWWWWWWWWWWWWWWWWWWWW]],
}

local MAP_CHARS = "W AaPQI.0123456789"
local map_name, map_text = p.map, MAPS[p.map]
if not map_text then
  if not p.map:find("\n", 1, true) then
    error(string.format("params.map: unknown map '%s' (maps: open, closed, partnership, or an " ..
                        "ASCII map with rows separated by newlines)", p.map), 0)
  end
  map_name, map_text = "custom", p.map
end
local ok_map, map = pcall(grid.parse_map, map_text, MAP_CHARS)
if not ok_map then error("params.map: " .. tostring(map):gsub("^grid%.parse_map: ", ""), 0) end

local N = polis.n_agents()
local W, H = map.width, map.height

-- Observation codes (README, "Observations").
local OUTSIDE, FLOOR, WALL, APPLE, GRASS, DEAD, SELF, AGENT0 = 0, 1, 2, 3, 4, 5, 6, 7
if N > 255 - AGENT0 + 1 then
  error(string.format("commons supports at most %d agents (u8 observation codes), got %d",
                      255 - AGENT0 + 1, N), 0)
end

local FIXED_FACING = nil
if p.facing ~= "random" then
  FIXED_FACING = grid.facing(p.facing)
  if not FIXED_FACING or #p.facing < 4 then
    error(string.format("params.facing: '%s' is not random, north, east, south or west",
                        p.facing), 0)
  end
end

-- background: "2-6", "0,3", "agent_4, agent_5" -> set of agent ids
local function parse_agents(spec, key)
  local set, list = {}, {}
  local by_name = {}
  for a = 0, N - 1 do by_name[polis.agent_name(a)] = a end
  for item in spec:gmatch("[^,]+") do
    item = item:match("^%s*(.-)%s*$")
    local lo, hi = item:match("^(%d+)%s*%-%s*(%d+)$")
    if not lo and item:match("^%d+$") then lo, hi = item, item end
    local ids = {}
    if lo then
      for _, v in ipairs{lo, hi} do
        if #v > 9 or tonumber(v) >= N then
          error(string.format("params.%s: agent %s is not an agent id (0..%d)", key, v, N - 1), 0)
        end
      end
      lo, hi = tonumber(lo) // 1, tonumber(hi) // 1
      if lo > hi then
        error(string.format("params.%s: range '%s' is empty", key, item), 0)
      end
      for a = lo, hi do ids[#ids + 1] = a end
    elseif by_name[item] then
      ids[1] = by_name[item]
    else
      error(string.format("params.%s: '%s' is neither an agent id, a range nor an agent name",
                          key, item), 0)
    end
    for _, a in ipairs(ids) do
      if set[a] then error(string.format("params.%s: agent %d is listed twice", key, a), 0) end
      set[a] = true
      list[#list + 1] = a
    end
  end
  table.sort(list)
  return set, list
end

local is_background, background_list = parse_agents(p.background, "background")
local focal_list = {}
for a = 0, N - 1 do
  if not is_background[a] then focal_list[#focal_list + 1] = a end
end
if p.background_bot ~= "free" and p.background_bot ~= "pacifist" then
  error(string.format("params.background_bot: '%s' is not free or pacifist", p.background_bot), 0)
end
if p.background_driver ~= "game" and p.background_driver ~= "host" then
  error(string.format("params.background_driver: '%s' is not game or host",
                      p.background_driver), 0)
end
local driven_list = {} -- the players the game drives
if p.background_driver == "game" then
  for _, a in ipairs(background_list) do driven_list[#driven_list + 1] = a end
end

-- ---- the map ----------------------------------------------------------------------------

local wall = {}     -- [cell] true for walls
local apple_of = {} -- [cell] apple index
local P_POINTS, Q_POINTS = map.cells["P"] or {}, map.cells["Q"] or {}
local first_spawn = {} -- [agent] cell of a digit on the map

local function cell_of(x, y) return y * W + x + 1 end

for y = 0, H - 1 do
  for x = 0, W - 1 do
    wall[cell_of(x, y)] = map.char(x, y) == "W"
  end
end
for d = 0, 9 do
  local list = map.cells[tostring(d)]
  if list then
    if #list > 1 then
      error(string.format("params.map: spawn cell '%d' appears %d times", d, #list), 0)
    end
    if d >= N then
      error(string.format("params.map: a spawn cell for agent %d, but the scenario has %d " ..
                          "agent%s", d, N, N == 1 and "" or "s"), 0)
    end
    first_spawn[d] = list[1]
  end
end

-- Apples: index i = 1..NA in row order. NB[i] lists the apples within regrowth_radius.
local AX, AY, ACELL, NB, START_ALIVE = {}, {}, {}, {}, {}
do
  local list = {}
  for _, c in ipairs(map.cells["A"] or {}) do list[#list + 1] = {c[1], c[2], true} end
  for _, c in ipairs(map.cells["a"] or {}) do list[#list + 1] = {c[1], c[2], false} end
  table.sort(list, function(u, v) return u[2] < v[2] or (u[2] == v[2] and u[1] < v[1]) end)
  for i, c in ipairs(list) do
    AX[i], AY[i], START_ALIVE[i] = c[1], c[2], c[3]
    ACELL[i] = cell_of(c[1], c[2])
    apple_of[ACELL[i]] = i
  end
end
local NA = #AX
do
  local disc = grid.disc(p.regrowth_radius)
  for i = 1, NA do
    local list = {}
    for _, d in ipairs(disc) do
      local x, y = AX[i] + d[1], AY[i] + d[2]
      local j = x >= 0 and x < W and y >= 0 and y < H and apple_of[cell_of(x, y)]
      if j then list[#list + 1] = j end
    end
    NB[i] = list
  end
end

-- Patches ("trees" in the text view): apples joined by chains of regrowth neighbours. With
-- regrowth_p0 = 0 a patch with no live apple is dead for good. Numbered 1, 2, ... in the
-- row order of their first apple.
local PATCH, NPATCH, PATCH_X, PATCH_Y, PATCH_SIZE = {}, 0, {}, {}, {}
do
  for i = 1, NA do
    if not PATCH[i] then
      NPATCH = NPATCH + 1
      PATCH[i] = NPATCH
      local stack = {i}
      while #stack > 0 do
        local j = table.remove(stack)
        for _, k in ipairs(NB[j]) do
          if not PATCH[k] then
            PATCH[k] = NPATCH
            stack[#stack + 1] = k
          end
        end
      end
    end
  end
  local sx, sy = {}, {}
  for k = 1, NPATCH do sx[k], sy[k], PATCH_SIZE[k] = 0, 0, 0 end
  for i = 1, NA do
    local k = PATCH[i]
    sx[k], sy[k], PATCH_SIZE[k] = sx[k] + AX[i], sy[k] + AY[i], PATCH_SIZE[k] + 1
  end
  -- a patch is "at" its cell nearest to its centre (ties: first in row order)
  for k = 1, NPATCH do
    local mx, my, best = sx[k] / PATCH_SIZE[k], sy[k] / PATCH_SIZE[k], math.huge
    for i = 1, NA do
      if PATCH[i] == k then
        local d = (AX[i] - mx) ^ 2 + (AY[i] - my) ^ 2
        if d < best then best, PATCH_X[k], PATCH_Y[k] = d, AX[i], AY[i] end
      end
    end
  end
end

-- Walkable neighbours of every cell, for the bots' and the parser's path finding.
local NB4 = {}
for y = 0, H - 1 do
  for x = 0, W - 1 do
    local c, list = cell_of(x, y), {}
    if not wall[c] then
      for d = 0, 3 do
        local nx, ny = x + grid.FX[d], y + grid.FY[d]
        if nx >= 0 and nx < W and ny >= 0 and ny < H and not wall[cell_of(nx, ny)] then
          list[#list + 1] = cell_of(nx, ny)
        end
      end
    end
    NB4[c] = list
  end
end

-- Spawning needs enough points: the inner group for the first inner_spawns players, the
-- outer group for the others and for every respawn.
do
  local need_q, need_p = 0, 0
  for a = 0, N - 1 do
    if not first_spawn[a] then
      if a < p.inner_spawns then need_q = need_q + 1 else need_p = need_p + 1 end
    end
  end
  if need_q > #Q_POINTS then
    error(string.format("params.map: %d player%s start on the inner spawn points but the map " ..
                        "has %d 'Q'", need_q, need_q == 1 and "" or "s", #Q_POINTS), 0)
  end
  if need_p > #P_POINTS or #P_POINTS == 0 then
    error(string.format("params.map: %d player%s start on the outer spawn points and every " ..
                        "respawn uses them, but the map has %d 'P'", need_p,
                        need_p == 1 and "" or "s", #P_POINTS), 0)
  end
end

polis.grid_configure(W, H, false)
local VIEW = polis.grid_layer("commons.view")

-- ---- world state (rebuilt at every reset) ---------------------------------------------------

local alive, nbr = {}, {}         -- [apple] live?, live apples among its neighbours
local empty, empty_pos, n_empty = {}, {}, 0 -- empty apple cells (a dense list)
local live_apples = 0
local patch_live, patches_depleted = {}, 0
local occ = {}                    -- [cell] agent id + 1, 0 = nobody
local px, py, face = {}, {}, {}
local on_map, cool = {}, {}
local zapped_by, zapped_at = {}, {} -- last zap suffered (agent, tick)
local eaten, ret = {}, {}         -- apples this step, return this episode (polis.reward
                                  -- reads eaten; eat counts both)
local ready = {}                  -- READY_TO_SHOOT per player, read by the host (the field's
                                  -- values table), set whenever on_map or cool changes
local pending = {}                -- action code chosen for this step
local zaps, zap_hits, zaps_landed = 0, 0, 0
local apple_version = 0           -- bumps whenever an apple appears or disappears
local finished = false
local later = timers.new()
-- The welfare statistics (one table: the main chunk's locals are limited). Per player: zaps
-- fired, zaps that hit someone, times hit, last apples of a patch eaten, hits by attacker
-- ([target][attacker], who zapped whom: the study's Figure 10); with study_metrics, steps
-- that began with the nearest apple the last of its tree (near), those in which the player
-- got closer to it (approach), and that apple and distance (ti, td); and the sum over steps of
-- the live apples (their mean).
local wf = {zaps = {}, landed = {}, zapped = {}, last = {}, hits_from = {}, near = {},
            approach = {}, ti = {}, td = {}, apples_sum = 0}

-- Changes during the current step, for the views (cleared when the next step begins).
local ch_eat_x, ch_eat_y, ch_eat_a, n_ch_eat = {}, {}, {}, 0
local ch_grow_x, ch_grow_y, n_ch_grow = {}, {}, 0
local ch_gone_x, ch_gone_y, n_ch_gone = {}, {}, 0
local ch_back_x, ch_back_y, n_ch_back = {}, {}, 0
local ch_beam_x, ch_beam_y, ch_beam_a, n_ch_beam = {}, {}, {}, 0
local ch_hit_x, ch_hit_y, ch_hit_a, ch_hit_by, n_ch_hit = {}, {}, {}, {}, 0

-- Apples whose look (apple, grass or bare) may have changed since the last scene (the looks'
-- scene function below reads and empties it): a dense list and a mark per apple, so a
-- recorded tick looks at the few apples that changed, not at all of them.
local scene_dirty, scene_marked, n_scene_dirty = {}, {}, 0
local function scene_mark(i)
  if not scene_marked[i] then
    scene_marked[i] = true
    n_scene_dirty = n_scene_dirty + 1
    scene_dirty[n_scene_dirty] = i
  end
end

local PK = {}
local function set_probabilities()
  local probs = {[0] = p.regrowth_p0, p.regrowth_p1, p.regrowth_p2, p.regrowth_p3}
  for k = 0, NA do PK[k] = probs[k >= 3 and 3 or k] end
end
set_probabilities()

-- ---- the view layer ---------------------------------------------------------------------------

-- What the cell shows without its player (also to an observer who may not see that player).
local function ground_code(c)
  local i = apple_of[c]
  if i then
    if alive[i] then return APPLE end
    return nbr[i] > 0 and GRASS or DEAD
  end
  return wall[c] and WALL or FLOOR
end

-- The code of a cell as the observation shows it; kept in the grid layer "commons.view" so
-- the observation is one polis.grid_view call.
local function code_of(c)
  local o = occ[c]
  if o ~= 0 then return AGENT0 + o - 1 end
  return ground_code(c)
end

local function repaint(c)
  local y = (c - 1) // W
  grid_set(VIEW, c - 1 - y * W, y, code_of(c))
end

-- ---- events ---------------------------------------------------------------------------------

polis.event("commons.eat", {{"agent", "i32"}, {"x", "i32"}, {"y", "i32"}, {"remaining", "i32"}})
polis.event("commons.grow", {{"x", "i32"}, {"y", "i32"}, {"remaining", "i32"}})
polis.event("commons.zap", {{"agent", "i32"}, {"x", "i32"}, {"y", "i32"}, {"facing", "i32"},
                            {"hits", "i32"}})
polis.event("commons.hit", {{"agent", "i32"}, {"target", "i32"}, {"x", "i32"}, {"y", "i32"}})
polis.event("commons.respawn", {{"agent", "i32"}, {"x", "i32"}, {"y", "i32"}})
polis.event("commons.depleted", {{"patch", "i32"}, {"x", "i32"}, {"y", "i32"},
                                 {"remaining", "i32"}})
polis.event("commons.apples", {{"count", "i32"}, {"depleted", "i32"}})
polis.event("commons.episode", {
  {"steps", "i32"}, {"ended", "i32"}, {"apples", "i32"}, {"zaps", "i32"}, {"zap_hits", "i32"},
  {"zaps_landed", "i32"}, {"patches", "i32"}, {"depleted", "i32"}, {"focal", "i32"},
  {"background", "i32"}, {"per_capita", "f64"}, {"focal_per_capita", "f64"},
  {"background_per_capita", "f64"}})

-- One reused table per event type: publishing allocates nothing.
local EV_EAT = {agent = 0, x = 0, y = 0, remaining = 0}
local EV_GROW = {x = 0, y = 0, remaining = 0}
local EV_ZAP = {agent = 0, x = 0, y = 0, facing = 0, hits = 0}
local EV_HIT = {agent = 0, target = 0, x = 0, y = 0}
local EV_RESPAWN = {agent = 0, x = 0, y = 0}
local EV_DEPLETED = {patch = 0, x = 0, y = 0, remaining = 0}
local EV_APPLES = {count = 0, depleted = 0}

-- ---- apples ---------------------------------------------------------------------------------

local function empty_add(i)
  n_empty = n_empty + 1
  empty[n_empty] = i
  empty_pos[i] = n_empty
end

local function empty_remove(i)
  local at, last = empty_pos[i], empty[n_empty]
  empty[at] = last
  empty_pos[last] = at
  empty[n_empty] = nil
  empty_pos[i] = nil
  n_empty = n_empty - 1
end

local function eat(a, i)
  alive[i] = false
  live_apples = live_apples - 1
  apple_version = apple_version + 1
  empty_add(i)
  scene_mark(i)
  eaten[a] = eaten[a] + 1
  ret[a] = ret[a] + 1
  local x, y = AX[i], AY[i]
  n_ch_eat = n_ch_eat + 1
  ch_eat_x[n_ch_eat], ch_eat_y[n_ch_eat], ch_eat_a[n_ch_eat] = x, y, a
  local list = NB[i]
  for k = 1, #list do
    local j = list[k]
    local n = nbr[j] - 1
    nbr[j] = n
    if n == 0 and not alive[j] then
      n_ch_gone = n_ch_gone + 1
      ch_gone_x[n_ch_gone], ch_gone_y[n_ch_gone] = AX[j], AY[j]
      repaint(ACELL[j])
      scene_mark(j)
    end
  end
  EV_EAT.agent, EV_EAT.x, EV_EAT.y, EV_EAT.remaining = a, x, y, live_apples
  publish("commons.eat", EV_EAT)
  local k = PATCH[i]
  patch_live[k] = patch_live[k] - 1
  if patch_live[k] == 0 then
    wf.last[a] = wf.last[a] + 1
    patches_depleted = patches_depleted + 1
    EV_DEPLETED.patch, EV_DEPLETED.x, EV_DEPLETED.y = k, PATCH_X[k], PATCH_Y[k]
    EV_DEPLETED.remaining = NPATCH - patches_depleted
    publish("commons.depleted", EV_DEPLETED)
  end
end

local function grow(i)
  alive[i] = true
  live_apples = live_apples + 1
  apple_version = apple_version + 1
  empty_remove(i)
  local x, y = AX[i], AY[i]
  n_ch_grow = n_ch_grow + 1
  ch_grow_x[n_ch_grow], ch_grow_y[n_ch_grow] = x, y
  repaint(ACELL[i])
  scene_mark(i)
  local list = NB[i]
  for k = 1, #list do
    local j = list[k]
    local n = nbr[j] + 1
    nbr[j] = n
    if n == 1 and not alive[j] then
      n_ch_back = n_ch_back + 1
      ch_back_x[n_ch_back], ch_back_y[n_ch_back] = AX[j], AY[j]
      repaint(ACELL[j])
      scene_mark(j)
    end
  end
  local k = PATCH[i]
  if patch_live[k] == 0 then patches_depleted = patches_depleted - 1 end
  patch_live[k] = patch_live[k] + 1
  EV_GROW.x, EV_GROW.y, EV_GROW.remaining = x, y, live_apples
  publish("commons.grow", EV_GROW)
end

-- Every empty apple cell regrows with the probability of its count of live neighbours. The
-- counts are those after this step's moves; all draws are made before any apple regrows,
-- so the order of the cells does not matter.
local grown = {}
local function regrow()
  local empty, nbr, PK = empty, nbr, PK -- as locals: they are read for every empty cell
  local n = 0
  for j = 1, n_empty do
    local i = empty[j]
    local pr = PK[nbr[i]]
    if pr > 0 and random() < pr then
      n = n + 1
      grown[n] = i
    end
  end
  for j = 1, n do grow(grown[j]) end
end

-- ---- players ----------------------------------------------------------------------------------

-- READY_TO_SHOOT: 1 when the beam can fire, rising from 0 while it recharges (the cooldown
-- never exceeds zap_cooldown); 0 off the map. Kept in `ready` by whatever changes on_map or
-- cool, so no step computes it for every player.
local function ready_to_shoot(a)
  if not on_map[a] then return 0 end
  if p.zap_cooldown == 0 then return 1 end
  return 1 - cool[a] / p.zap_cooldown
end

local function place(a, x, y, facing)
  local c = cell_of(x, y)
  px[a], py[a], face[a], on_map[a] = x, y, facing, true
  ready[a] = ready_to_shoot(a)
  occ[c] = a + 1
  repaint(c)
  local i = apple_of[c]
  if i and alive[i] then eat(a, i) end
end

local function remove(a)
  local c = cell_of(px[a], py[a])
  occ[c] = 0
  on_map[a] = false
  ready[a] = 0
  repaint(c)
end

local function spawn_facing()
  if FIXED_FACING then return FIXED_FACING end
  return random(0, 3)
end

local function is_free(x, y) return occ[y * W + x + 1] == 0 end -- occ[cell_of(x, y)]

-- A free outer spawn point, drawn as grid.pick_free(P_POINTS, is_free) draws it (the same
-- random number), from the points' cells listed once: a respawn looks at every point, and a
-- call to is_free per point was most of its cost.
local pick_free_outer
do -- a block: its locals do not count towards the main chunk's limit of 200
local P_CELLS, free = {}, {}
for k, pt in ipairs(P_POINTS) do P_CELLS[k] = cell_of(pt[1], pt[2]) end
pick_free_outer = function()
  local cells, occ, n = P_CELLS, occ, 0
  for k = 1, #cells do
    if occ[cells[k]] == 0 then
      n = n + 1
      free[n] = k
    end
  end
  if n == 0 then return nil end
  return free[random(n)]
end
end

local respawn
respawn = function(a)
  local k = pick_free_outer()
  if not k then
    -- every outer spawn point is taken: try again next step
    later:at(polis.tick() + 1, respawn, a)
    return
  end
  place(a, P_POINTS[k][1], P_POINTS[k][2], spawn_facing())
  EV_RESPAWN.agent, EV_RESPAWN.x, EV_RESPAWN.y = a, px[a], py[a]
  publish("commons.respawn", EV_RESPAWN)
end

local function spawn_all()
  for a = 0, N - 1 do
    local pt = first_spawn[a]
    if not pt then
      local group = a < p.inner_spawns and Q_POINTS or P_POINTS
      local k = grid.pick_free(group, is_free)
      if not k then
        polis.error(string.format("no free %s spawn point for agent %d",
                                  group == Q_POINTS and "'Q'" or "'P'", a))
      end
      pt = group[k]
    elseif occ[cell_of(pt[1], pt[2])] ~= 0 then
      polis.error(string.format("spawn cell '%d' is taken", a))
    end
    place(a, pt[1], pt[2], spawn_facing())
  end
end

-- Moves relative to facing: codes 1 forward, 2 backward, 3 step left, 4 step right.
local MOVE_REL = {0, 2, 3, 1}
local FX, FY = grid.FX, grid.FY

local function move(a, code)
  local dir = (face[a] + MOVE_REL[code]) % 4
  local ox, oy = px[a], py[a]
  local x, y = ox + FX[dir], oy + FY[dir]
  if x < 0 or x >= W or y < 0 or y >= H then return end
  local c = y * W + x + 1
  if wall[c] or occ[c] ~= 0 then return end
  local old = oy * W + ox + 1
  occ[old] = 0
  grid_set(VIEW, ox, oy, ground_code(old)) -- repaint(old): nobody stands there now
  px[a], py[a] = x, y
  occ[c] = a + 1
  local i = apple_of[c]
  if i and alive[i] then eat(a, i) end
  grid_set(VIEW, x, y, AGENT0 + a) -- code_of(c): the player stands there
end

-- The beam: hits are collected while every beam of the step is traced and applied after
-- (a player zapped by two players in one step is hit twice and still blocks both beams).
local hit_t, hit_by, n_hits = {}, {}, 0
local BEAM = {}
for f = 0, 3 do BEAM[f] = grid.beam_lines(f, p.beam_length, p.beam_radius) end

-- grid.trace of the beam's lines, written out here (no call per cell): a cell stops its line
-- when it is off the map, a wall, or a player. With `collect`, every player met is hit
-- (hit_t, hit_by) and the count is returned; without it, the walk answers whether it meets a
-- player (`only`, when given) — the bots ask this up to three times a step.
local function walk_beam(a, facing, collect, only)
  local W, H, occ, wall = W, H, occ, wall -- as locals: read for every cell of the beam
  local x, y, count = px[a], py[a], 0
  local lines = BEAM[facing]
  local stopped_left, stopped_right = false, false
  for k = 1, #lines do
    local line = lines[k]
    local side = line.side
    if not (side == -1 and stopped_left or side == 1 and stopped_right) then
      local dx, dy = line.dx, line.dy
      for i = 1, line.n do
        local cx, cy = x + dx[i], y + dy[i]
        local stop = true
        if cx >= 0 and cx < W and cy >= 0 and cy < H then
          local c = cy * W + cx + 1
          local o = occ[c]
          if o ~= 0 then
            if not collect then
              if only == nil or o == only + 1 then return true end
            else
              n_hits = n_hits + 1
              hit_t[n_hits], hit_by[n_hits] = o - 1, a
              count = count + 1
            end
          elseif not wall[c] then
            stop = false
          end
        end
        if stop then
          if i == 1 then
            if side == -1 then stopped_left = true elseif side == 1 then stopped_right = true end
          end
          break
        end
      end
    end
  end
  if collect then return count end
  return false
end

local function fire(a)
  local beam_count = walk_beam(a, face[a], true)
  zaps = zaps + 1
  wf.zaps[a] = wf.zaps[a] + 1
  if beam_count > 0 then
    zaps_landed = zaps_landed + 1
    wf.landed[a] = wf.landed[a] + 1
  end
  n_ch_beam = n_ch_beam + 1
  ch_beam_x[n_ch_beam], ch_beam_y[n_ch_beam], ch_beam_a[n_ch_beam] = px[a], py[a], a
  EV_ZAP.agent, EV_ZAP.x, EV_ZAP.y, EV_ZAP.facing, EV_ZAP.hits = a, px[a], py[a], face[a],
                                                                 beam_count
  publish("commons.zap", EV_ZAP)
end

-- ---- actions ------------------------------------------------------------------------------

local FORWARD, BACKWARD, STEP_LEFT, STEP_RIGHT, TURN_LEFT, TURN_RIGHT, FIRE_ZAP = 1, 2, 3, 4, 5,
                                                                                  6, 7
local ACTIONS = {
  {"forward", "move one cell forward (where the player faces)"},
  {"backward", "move one cell backward, keeping the facing"},
  {"step_left", "move one cell to the left, keeping the facing"},
  {"step_right", "move one cell to the right, keeping the facing"},
  {"turn_left", "turn 90 degrees to the left"},
  {"turn_right", "turn 90 degrees to the right"},
  {"fire_zap", "fire the zapping beam (when it is ready)"},
}
-- An action sets pending[a] = its code (the host writes it: no call into Lua per action);
-- the resolve hook replaces the choice of a player the game drives by its bot's.
local ACTION_ID, CODE_OF_ID = {}, {}
for code, def in ipairs(ACTIONS) do
  local id = polis.action{name = def[1], doc = def[2], into = pending, value = code}
  ACTION_ID[code], CODE_OF_ID[id] = id, code
end
ACTION_ID[0], CODE_OF_ID[0] = 0, 0

-- ---- the bots -------------------------------------------------------------------------------

-- A distance field to the nearest live apple over walkable cells, shared by every bot and
-- recomputed only when an apple appeared or disappeared.
local INF = math.huge
local dist, queue = {}, {}
local dist_version = -1
local function apple_distances()
  if dist_version == apple_version then return end
  dist_version = apple_version
  for c = 1, W * H do dist[c] = INF end
  local head, tail = 1, 0
  for i = 1, NA do
    if alive[i] then
      local c = ACELL[i]
      dist[c] = 0
      tail = tail + 1
      queue[tail] = c
    end
  end
  while head <= tail do
    local c = queue[head]
    head = head + 1
    local d = dist[c] + 1
    local list = NB4[c]
    for k = 1, #list do
      local n = list[k]
      if dist[n] > d then
        dist[n] = d
        tail = tail + 1
        queue[tail] = n
      end
    end
  end
end

-- Is another player (`only`, when given) in the beam of `a` if it faced `facing`?
local function target_in_beam(a, facing, only)
  return walk_beam(a, facing, false, only)
end

-- Relative moves in order of preference, and their action codes.
local PREFER = {0, 3, 1, 2}
local CODE_OF_REL = {[0] = FORWARD, [1] = STEP_RIGHT, [2] = BACKWARD, [3] = STEP_LEFT}

-- The greedy harvester: walk to the nearest live apple (it never leaves one to regrow);
-- the free variant first zaps any player in its beam when the beam is ready, or turns
-- towards one that a turn would bring into it.
local function rival_in_reach(a)
  local x, y, reach = px[a], py[a], math.max(p.beam_length, p.beam_radius)
  for b = 0, N - 1 do
    if b ~= a and on_map[b] then
      local dx, dy = px[b] - x, py[b] - y
      if dx <= reach and dx >= -reach and dy <= reach and dy >= -reach then return true end
    end
  end
  return false
end

local function bot_action(a, zapper)
  if not on_map[a] then return 0 end
  if zapper and p.beam_length > 0 and cool[a] == 0 and rival_in_reach(a) then
    if target_in_beam(a, face[a]) then return FIRE_ZAP end
    if target_in_beam(a, (face[a] + 1) % 4) then return TURN_RIGHT end
    if target_in_beam(a, (face[a] + 3) % 4) then return TURN_LEFT end
  end
  apple_distances()
  local x, y, f = px[a], py[a], face[a]
  local best, choice = INF, nil
  for k = 1, 4 do
    local rel = PREFER[k]
    local dir = (f + rel) % 4
    local nx, ny = x + FX[dir], y + FY[dir]
    if nx >= 0 and nx < W and ny >= 0 and ny < H then
      local c = ny * W + nx + 1
      if not wall[c] and occ[c] == 0 and dist[c] < best then best, choice = dist[c], rel end
    end
  end
  if choice == nil then return 0 end
  return CODE_OF_REL[choice]
end

polis.policy("commons_free", function(a) return ACTION_ID[bot_action(a, true)] end)
polis.policy("commons_pacifist", function(a) return ACTION_ID[bot_action(a, false)] end)
local BOT_ZAPS = p.background_bot == "free"

-- ---- the step -------------------------------------------------------------------------------

local order = {}

polis.on("reset", function()
  later:clear()
  finished = false
  zaps, zap_hits, zaps_landed = 0, 0, 0
  live_apples, n_empty, patches_depleted = 0, 0, 0
  empty, empty_pos = {}, {}
  for c = 1, W * H do occ[c] = 0 end
  for k = 1, NPATCH do patch_live[k] = 0 end
  for i = 1, NA do
    alive[i] = START_ALIVE[i]
    if alive[i] then
      live_apples = live_apples + 1
      patch_live[PATCH[i]] = patch_live[PATCH[i]] + 1
    else
      empty_add(i)
    end
  end
  for k = 1, NPATCH do
    if patch_live[k] == 0 then patches_depleted = patches_depleted + 1 end
  end
  for i = 1, NA do
    local n = 0
    local list = NB[i]
    for k = 1, #list do
      if alive[list[k]] then n = n + 1 end
    end
    nbr[i] = n
  end
  apple_version = apple_version + 1
  for i = 1, NA do scene_mark(i) end
  for a = 0, N - 1 do
    on_map[a], cool[a], eaten[a], ret[a], pending[a] = false, 0, 0, 0, 0
    zapped_by[a], zapped_at[a] = -1, -1
    wf.zaps[a], wf.landed[a], wf.zapped[a], wf.last[a] = 0, 0, 0, 0
    wf.near[a], wf.approach[a], wf.ti[a] = 0, 0, 0
    local row = wf.hits_from[a] or {}
    for b = 0, N - 1 do row[b] = 0 end
    wf.hits_from[a] = row
  end
  wf.apples_sum = 0
  n_ch_eat, n_ch_grow, n_ch_gone, n_ch_back, n_ch_beam, n_ch_hit = 0, 0, 0, 0, 0, 0
  for c = 1, W * H do repaint(c) end
  spawn_all()
  -- apples eaten by spawning players are not rewarded (there is no step to reward them in)
  for a = 0, N - 1 do
    ret[a], eaten[a], wf.last[a] = 0, 0, 0
    ready[a] = ready_to_shoot(a)
  end
  n_ch_eat = 0
end)

-- Before the moves: each player's nearest live apple (squared Euclidean distance, the first
-- in row order on ties), remembered when it is the last of its patch.
local function last_apple_targets()
  for a = 0, N - 1 do
    wf.ti[a] = 0
    if on_map[a] and live_apples > 0 then
      local best, bi = math.huge, 0
      for i = 1, NA do
        if alive[i] then
          local dx, dy = AX[i] - px[a], AY[i] - py[a]
          local d = dx * dx + dy * dy
          if d < best then best, bi = d, i end
        end
      end
      if patch_live[PATCH[bi]] == 1 then
        wf.near[a] = wf.near[a] + 1
        wf.ti[a], wf.td[a] = bi, best
      end
    end
  end
end

-- After the moves: a player nearer its remembered last apple (or on it) approached it.
local function last_apple_approaches()
  for a = 0, N - 1 do
    local i = wf.ti[a]
    if i > 0 and on_map[a] then
      local dx, dy = AX[i] - px[a], AY[i] - py[a]
      if dx * dx + dy * dy < wf.td[a] then wf.approach[a] = wf.approach[a] + 1 end
    end
  end
end

-- Melting Pot's order within a frame: every player moves or turns (in a random order), then
-- every player's zapper runs, then the players hit leave the map, then respawns; then the
-- apples regrow. One hook for the whole step: what a begin hook would do (the step's counts
-- cleared, the bots' choices) comes first, as nothing between the begin and resolve phases
-- (the action handlers) reads or changes it, and the regrowth last, as the world phase would
-- (each hook is a protected call into Lua, a noticeable part of this game's step).
do -- parameters every step reads, as locals (the script never changes p); a block, so they
   -- do not count towards the main chunk's limit of 200 locals
local ZAP_COOLDOWN, BEAM_LENGTH = p.zap_cooldown, p.beam_length
local STUDY_METRICS, BOT_EVERY, SHUFFLE_ORDER = p.study_metrics, p.bot_every, p.shuffle_order
polis.on("resolve", function()
  -- The tables read for every player, as locals: indexing an upvalue's table takes one VM
  -- instruction more than a local's, and the step runs every instruction under the budget.
  local on_map, pending, order, eaten, cool, face = on_map, pending, order, eaten, cool, face
  n_ch_eat, n_ch_grow, n_ch_gone, n_ch_back, n_ch_beam, n_ch_hit = 0, 0, 0, 0, 0, 0
  if STUDY_METRICS then last_apple_targets() end
  if #driven_list > 0 then -- the bots' choices, or a wait, in place of the host's
    local bots_move = polis.tick() % BOT_EVERY == 0
    for j = 1, #driven_list do
      local a = driven_list[j]
      pending[a] = bots_move and bot_action(a, BOT_ZAPS) or 0
    end
  end
  local n = 0
  for a = 0, N - 1 do
    eaten[a] = 0
    if on_map[a] then
      n = n + 1
      order[n] = a
    end
  end
  if SHUFFLE_ORDER then
    for j = n, 2, -1 do
      local k = random(j)
      order[j], order[k] = order[k], order[j]
    end
  end
  for j = 1, n do
    local a = order[j]
    local code = pending[a]
    if code ~= 0 then
      if code <= STEP_RIGHT then
        move(a, code)
      elseif code == TURN_LEFT then
        face[a] = (face[a] + 3) % 4
      elseif code == TURN_RIGHT then
        face[a] = (face[a] + 1) % 4
      end
    end
  end
  -- The zappers' order does not matter: hits are applied after every beam.
  n_hits = 0
  for a = 0, N - 1 do
    if on_map[a] then
      local c = cool[a]
      if c > 0 then
        cool[a] = c - 1
        ready[a] = ready_to_shoot(a)
      elseif pending[a] == FIRE_ZAP then
        cool[a] = ZAP_COOLDOWN
        ready[a] = ready_to_shoot(a)
        if BEAM_LENGTH > 0 then fire(a) end
      end
    end
    pending[a] = 0 -- used: the next step's action handlers (or bots) choose again
  end
  if n_hits > 0 then
    local tick = polis.tick()
    for j = 1, n_hits do
      local t, by = hit_t[j], hit_by[j]
      zap_hits = zap_hits + 1
      wf.zapped[t] = wf.zapped[t] + 1
      wf.hits_from[t][by] = wf.hits_from[t][by] + 1
      n_ch_hit = n_ch_hit + 1
      ch_hit_x[n_ch_hit], ch_hit_y[n_ch_hit] = px[t], py[t]
      ch_hit_a[n_ch_hit], ch_hit_by[n_ch_hit] = t, by
      EV_HIT.agent, EV_HIT.target, EV_HIT.x, EV_HIT.y = by, t, px[t], py[t]
      publish("commons.hit", EV_HIT)
      if on_map[t] then
        remove(t)
        later:at(tick + p.respawn_delay + 1, respawn, t)
      end
      zapped_by[t], zapped_at[t] = by, tick
    end
  end
  later:run(polis.tick())
  regrow()
end)
end

polis.reward("apples", eaten) -- eaten[a]: read by the host, no call per player

-- ---- metrics --------------------------------------------------------------------------------

local function mean_return(list)
  if #list == 0 then return 0 end
  local s = 0
  for _, a in ipairs(list) do s = s + ret[a] end
  return s / #list
end

local ALL = {}
for a = 0, N - 1 do ALL[#ALL + 1] = a end

do -- a block: its locals do not count towards the main chunk's limit of 200
local function agents_text(list)
  if #list == 0 then return "none" end
  local parts, j = {}, 1
  while j <= #list do
    local k = j
    while k < #list and list[k + 1] == list[k] + 1 do k = k + 1 end
    parts[#parts + 1] = k > j and (list[j] .. "-" .. list[k]) or tostring(list[j])
    j = k + 1
  end
  return (#list == 1 and "agent " or "agents ") .. table.concat(parts, ",")
end

local function finish(steps, ended)
  finished = true
  local pc, fpc, bpc = mean_return(ALL), mean_return(focal_list), mean_return(background_list)
  publish("commons.episode", {
    steps = steps, ended = ended and 1 or 0, apples = live_apples, zaps = zaps,
    zap_hits = zap_hits, zaps_landed = zaps_landed, patches = NPATCH,
    depleted = patches_depleted, focal = #focal_list, background = #background_list,
    per_capita = pc, focal_per_capita = fpc, background_per_capita = bpc})
  polis.log(string.format(
    "episode %d %s after %d steps: per-capita return %.2f, focal %.2f (%s), background %s; " ..
    "apples left %d of %d; patches depleted %d of %d; zaps %d, %d hit a player",
    polis.episode(), ended and "ended" or "reached max_steps", steps, pc, fpc,
    agents_text(focal_list),
    #background_list > 0 and string.format("%.2f (%s, %s bots)", bpc,
                                           agents_text(background_list), p.background_bot)
      or "none",
    live_apples, NA, patches_depleted, NPATCH, zaps, zaps_landed))
end

local SAMPLE_EVERY, END_MIN_STEPS, END_INTERVAL = p.sample_every, p.end_min_steps, p.end_interval
local END_PROBABILITY, END_WHEN_NO_APPLES = p.end_probability, p.end_when_no_apples
-- No loop over the players here: eat adds to ret as it adds to eaten, and `ready` changes
-- with on_map and cool.
polis.on("end", function()
  if p.study_metrics then last_apple_approaches() end
  local t = polis.tick() + 1
  if SAMPLE_EVERY > 0 and t % SAMPLE_EVERY == 0 then
    EV_APPLES.count, EV_APPLES.depleted = live_apples, patches_depleted
    publish("commons.apples", EV_APPLES)
  end
  local ended = false
  if t >= END_MIN_STEPS and t % END_INTERVAL == 0 and END_PROBABILITY > 0 and
     random() < END_PROBABILITY then
    ended = true
  end
  if END_WHEN_NO_APPLES and live_apples == 0 then ended = true end
  if ended then
    for a = 0, N - 1 do polis.terminate(a) end
  end
  wf.apples_sum = wf.apples_sum + live_apples
  if not finished and (ended or t >= polis.max_steps()) then finish(t, ended) end
end)
end

-- ---- observations -----------------------------------------------------------------------------

local AHEAD, BEHIND, SIDE = p.view_ahead, p.view_behind, p.view_side
local ROWS, COLS = AHEAD + 1 + BEHIND, 2 * SIDE + 1
local grid_view = polis.grid_view
local visible, visibility_active = polis.visible, polis.visibility_active

-- Who sees whom (docs/visibility.md): may a see player b? Every view of another player asks.
local function sees(a, b)
  return a == b or not visibility_active() or visible(a, b)
end

-- One call writes every player's view (write_all: player a's elements start at a * CELLS + 1),
-- instead of a call into Lua per player and step.
local CELLS = ROWS * COLS
polis.observation{
  name = "view", dtype = "u8", shape = {ROWS, COLS},
  doc = "the egocentric window, rotated so the player faces up (codes in the README)",
  range = {OUTSIDE, AGENT0 + N - 1}, -- 0 outside .. 7 + the last player's id
  write_all = function(buf)
    local hiding = visibility_active()
    local on_map, px, py, face = on_map, px, py, face -- as locals: read for every player
    for a = 0, N - 1 do
      if on_map[a] then
        local first = a * CELLS + 1
        grid_view(buf, VIEW, px[a], py[a], face[a], AHEAD, BEHIND, SIDE, SIDE, OUTSIDE, first,
                  SELF) -- the player's own cell shows SELF
        if hiding then -- players a may not see show the ground they stand on
          for i = first, first + CELLS - 1 do
            local b = buf[i] - AGENT0
            if b >= 0 and not visible(a, b) then buf[i] = ground_code(cell_of(px[b], py[b])) end
          end
        end
      end
    end
  end,
}

-- The host reads each player's value from `ready` (no call into Lua per player and step):
-- the reset and end hooks set it.
polis.observation{
  name = "READY_TO_SHOOT", dtype = "f32", shape = {1}, range = {0, 1},
  doc = "1 when the beam can fire, rising from 0 while it recharges; 0 when off the map",
  values = ready,
}

-- ---- views for LLM agents ---------------------------------------------------------------------

-- The window's cells in view order (nearest first, ties in row then column order), for each
-- facing: {dx, dy}.
local WINDOW = {}
for f = 0, 3 do
  local cells = {}
  grid.window(0, 0, f, AHEAD, BEHIND, SIDE, SIDE, function(_, _, dx, dy)
    cells[#cells + 1] = {dx, dy}
  end)
  table.sort(cells, function(u, v)
    local du, dv = u[1] * u[1] + u[2] * u[2], v[1] * v[1] + v[2] * v[2]
    if du ~= dv then return du < dv end
    if u[2] ~= v[2] then return u[2] < v[2] end
    return u[1] < v[1]
  end)
  WINDOW[f] = cells
end

-- Is (x, y) in agent a's window now?
local function in_view(a, x, y)
  local dx, dy = x - px[a], y - py[a]
  local f = face[a]
  local ahead = dx * FX[f] + dy * FY[f]
  local r = (f + 1) % 4
  local right = dx * FX[r] + dy * FY[r]
  return ahead <= AHEAD and ahead >= -BEHIND and right >= -SIDE and right <= SIDE
end

local function pos(x, y) return string.format("[%d, %d]", y, x) end

-- What agent a sees: lists in view order.
local function observe(a)
  local seen = {agents = {}, apples = {}, grass = {}, trees = {}, tree_order = {}}
  local x0, y0 = px[a], py[a]
  for _, d in ipairs(WINDOW[face[a]]) do
    local x, y = x0 + d[1], y0 + d[2]
    if x >= 0 and x < W and y >= 0 and y < H then
      local c = cell_of(x, y)
      local o = occ[c]
      if o ~= 0 and o - 1 ~= a and sees(a, o - 1) then
        seen.agents[#seen.agents + 1] = {o - 1, x, y}
      end
      local i = apple_of[c]
      if i then
        local k = PATCH[i]
        local t = seen.trees[k]
        if not t then
          t = {apples = 0, grass = 0}
          seen.trees[k] = t
          seen.tree_order[#seen.tree_order + 1] = k
        end
        if alive[i] then
          seen.apples[#seen.apples + 1] = {x, y, k}
          t.apples = t.apples + 1
        elseif nbr[i] > 0 then
          seen.grass[#seen.grass + 1] = {x, y, k}
          t.grass = t.grass + 1
        end
      end
    end
  end
  return seen
end

local FACING_NAME = grid.FACINGS

local function out_of_game(a)
  if zapped_at[a] == polis.tick() - 1 and zapped_by[a] >= 0 then
    return string.format("There are no observations: you were attacked by agent %s and are " ..
                         "currently out of the game.", polis.agent_name(zapped_by[a]))
  end
  return "There are no observations: you are out of the game."
end

local function beam_state(a)
  if p.zap_cooldown == 0 or cool[a] == 0 then return "Your zapping beam is ready." end
  return string.format("Your zapping beam is recharging: it can fire again in %d steps.",
                       cool[a] + 1)
end

polis.renderer("text", function(a)
  local lines = {}
  local function add(s) lines[#lines + 1] = s end
  local tick = polis.tick()
  add(string.format("You are agent %s. Step %d. Positions are [row, column]; [0, 0] is the " ..
                    "top-left corner of the %d x %d map (rows x columns).",
                    polis.agent_name(a), tick, H, W))
  if not on_map[a] then
    add(out_of_game(a))
    return table.concat(lines, "\n") .. "\n"
  end
  add(string.format("You are at position %s, facing %s. %s", pos(px[a], py[a]),
                    FACING_NAME[face[a]], beam_state(a)))
  local seen = observe(a)
  add("Current observations (nearest first):")
  local n0 = #lines
  for _, s in ipairs(seen.agents) do
    add(string.format("Observed agent %s at position %s.", polis.agent_name(s[1]),
                      pos(s[2], s[3])))
  end
  for _, s in ipairs(seen.apples) do
    add(string.format("Observed an apple at position %s. This apple belongs to tree %d.",
                      pos(s[1], s[2]), s[3]))
  end
  for _, s in ipairs(seen.grass) do
    add(string.format("Observed grass to grow apples at position %s. This grass belongs to " ..
                      "tree %d.", pos(s[1], s[2]), s[3]))
  end
  for _, k in ipairs(seen.tree_order) do
    local t = seen.trees[k]
    add(string.format("Observed tree %d at position %s. This tree has %d apple%s remaining " ..
                      "and %d grass for apples growing on the observed map. The tree might " ..
                      "have more apples and grass on the global map.", k,
                      pos(PATCH_X[k], PATCH_Y[k]), t.apples, t.apples == 1 and "" or "s",
                      t.grass))
  end
  if #lines == n0 then add("Nothing but floor and walls.") end
  local changes = {}
  local function change(x, y, s)
    if in_view(a, x, y) then changes[#changes + 1] = s end
  end
  for j = 1, n_ch_beam do
    if ch_beam_a[j] ~= a and sees(a, ch_beam_a[j]) then
      change(ch_beam_x[j], ch_beam_y[j], string.format("Observed a ray beam from position %s.",
                                                       pos(ch_beam_x[j], ch_beam_y[j])))
    end
  end
  for j = 1, n_ch_hit do
    if sees(a, ch_hit_a[j]) then
      change(ch_hit_x[j], ch_hit_y[j], string.format("Observed that someone was attacked at " ..
                                                     "position %s.",
                                                     pos(ch_hit_x[j], ch_hit_y[j])))
    end
  end
  for j = 1, n_ch_eat do
    if ch_eat_a[j] ~= a and sees(a, ch_eat_a[j]) then
      change(ch_eat_x[j], ch_eat_y[j], string.format("Observed that agent %s took an apple " ..
                                                     "from position %s.",
                                                     polis.agent_name(ch_eat_a[j]),
                                                     pos(ch_eat_x[j], ch_eat_y[j])))
    end
  end
  for j = 1, n_ch_gone do
    change(ch_gone_x[j], ch_gone_y[j], string.format("Observed that the grass at position %s " ..
                                                     "disappeared.",
                                                     pos(ch_gone_x[j], ch_gone_y[j])))
  end
  for j = 1, n_ch_back do
    change(ch_back_x[j], ch_back_y[j], string.format("Observed that grass to grow apples " ..
                                                     "appeared at position %s.",
                                                     pos(ch_back_x[j], ch_back_y[j])))
  end
  for j = 1, n_ch_grow do
    change(ch_grow_x[j], ch_grow_y[j], string.format("Observed that an apple grew at " ..
                                                     "position %s.",
                                                     pos(ch_grow_x[j], ch_grow_y[j])))
  end
  if #changes > 0 then
    add("Changes since the last step:")
    for _, s in ipairs(changes) do add(s) end
  end
  if eaten[a] > 0 then
    add(string.format("You took %d apple%s in the last step.", eaten[a],
                      eaten[a] == 1 and "" or "s"))
  end
  return table.concat(lines, "\n") .. "\n"
end)

local function rc(x, y) return {y, x} end

local function episode_json()
  local returns = {}
  for a = 0, N - 1 do returns[a + 1] = ret[a] end
  return {
    tick = polis.tick(), apples = live_apples, apples_total = NA, zaps = zaps,
    zap_hits = zap_hits, zaps_landed = zaps_landed, patches = NPATCH,
    patches_depleted = patches_depleted, returns = returns, per_capita_return = mean_return(ALL),
    focal = focal_list, background = background_list,
    focal_per_capita_return = mean_return(focal_list),
    background_per_capita_return = #background_list > 0 and mean_return(background_list)
                                     or json.null,
  }
end

polis.renderer("json", function(a)
  local v = {
    name = polis.agent_name(a), id = a, on_map = on_map[a],
    coordinates = "[row, column], [0, 0] is the top-left cell",
    episode = episode_json(),
    role = is_background[a] and "background" or "focal",
  }
  if not on_map[a] then
    v.zapped_by = zapped_by[a] >= 0 and polis.agent_name(zapped_by[a]) or json.null
    v.text = out_of_game(a)
    return json.encode(v)
  end
  v.position, v.facing = rc(px[a], py[a]), FACING_NAME[face[a]]
  v.ready_to_shoot = ready_to_shoot(a)
  local seen = observe(a)
  local agents, apples, grass, trees = {}, {}, {}, {}
  for _, s in ipairs(seen.agents) do
    agents[#agents + 1] = {name = polis.agent_name(s[1]), id = s[1], position = rc(s[2], s[3]),
                           facing = FACING_NAME[face[s[1]]]}
  end
  for _, s in ipairs(seen.apples) do apples[#apples + 1] = {position = rc(s[1], s[2]), tree = s[3]} end
  for _, s in ipairs(seen.grass) do grass[#grass + 1] = {position = rc(s[1], s[2]), tree = s[3]} end
  for _, k in ipairs(seen.tree_order) do
    trees[#trees + 1] = {id = k, position = rc(PATCH_X[k], PATCH_Y[k]),
                         apples = seen.trees[k].apples, grass = seen.trees[k].grass}
  end
  v.observed = {agents = agents, apples = apples, grass = grass, trees = trees}
  local ch = {beams = {}, attacked = {}, apples_taken = {}, apples_grown = {}, grass_gone = {},
              grass_back = {}}
  for j = 1, n_ch_beam do
    if in_view(a, ch_beam_x[j], ch_beam_y[j]) and sees(a, ch_beam_a[j]) then
      ch.beams[#ch.beams + 1] = {agent = polis.agent_name(ch_beam_a[j]),
                                 position = rc(ch_beam_x[j], ch_beam_y[j])}
    end
  end
  for j = 1, n_ch_hit do
    if in_view(a, ch_hit_x[j], ch_hit_y[j]) and sees(a, ch_hit_a[j]) then
      ch.attacked[#ch.attacked + 1] = rc(ch_hit_x[j], ch_hit_y[j])
    end
  end
  for j = 1, n_ch_eat do
    if in_view(a, ch_eat_x[j], ch_eat_y[j]) and sees(a, ch_eat_a[j]) then
      ch.apples_taken[#ch.apples_taken + 1] = {agent = polis.agent_name(ch_eat_a[j]),
                                               position = rc(ch_eat_x[j], ch_eat_y[j])}
    end
  end
  local function list(n, xs, ys, out)
    for j = 1, n do
      if in_view(a, xs[j], ys[j]) then out[#out + 1] = rc(xs[j], ys[j]) end
    end
  end
  list(n_ch_grow, ch_grow_x, ch_grow_y, ch.apples_grown)
  list(n_ch_gone, ch_gone_x, ch_gone_y, ch.grass_gone)
  list(n_ch_back, ch_back_x, ch_back_y, ch.grass_back)
  v.changes = ch
  v.eaten = eaten[a]
  return json.encode(v)
end)

-- "metrics": the episode's numbers as one JSON object, the same for every agent (the
-- convention of plugins/metrics, so `polis eval --no-metrics` tabulates them).
polis.renderer("metrics", function()
  local per_agent = {}
  for a = 0, N - 1 do
    local by = json.object()
    for b = 0, N - 1 do
      if wf.hits_from[a][b] > 0 then by[polis.agent_name(b)] = wf.hits_from[a][b] end
    end
    per_agent[a + 1] = {agent = polis.agent_name(a), ["return"] = ret[a],
                        role = is_background[a] and "background" or "focal",
                        zaps = wf.zaps[a], zaps_landed = wf.landed[a], zapped = wf.zapped[a],
                        zapped_by = by, last_apples = wf.last[a],
                        last_apple_near = p.study_metrics and wf.near[a] or json.null,
                        last_apple_approach = p.study_metrics and wf.approach[a] or json.null}
  end
  local function sum(list, t)
    local s = 0
    for _, a in ipairs(list) do s = s + t[a] end
    return s
  end
  local function group(list)
    if #list == 0 then return json.null end
    local g = {zaps = sum(list, wf.zaps), zaps_landed = sum(list, wf.landed),
               zapped = sum(list, wf.zapped), last_apples = sum(list, wf.last),
               last_apple_ratio = json.null}
    if p.study_metrics then
      local near = sum(list, wf.near)
      g.last_apple_near, g.last_apple_approach = near, sum(list, wf.approach)
      if near > 0 then g.last_apple_ratio = g.last_apple_approach / near end
    end
    return g
  end
  local steps = polis.tick()
  return json.encode({
    steps = polis.tick(),
    ["return"] = {
      per_capita = mean_return(ALL), focal_per_capita = mean_return(focal_list),
      background_per_capita = #background_list > 0 and mean_return(background_list) or json.null,
    },
    apples = {remaining = live_apples, total = NA},
    patches = {total = NPATCH, depleted = patches_depleted},
    zaps = {fired = zaps, landed = zaps_landed, hits = zap_hits},
    population = {focal = #focal_list, background = #background_list},
    welfare = {apples_mean = steps > 0 and wf.apples_sum / steps or live_apples,
               focal = group(focal_list), background = group(background_list)},
    per_agent = per_agent,
  })
end)

-- ---- text actions ---------------------------------------------------------------------------

local WORDS = {
  ["forward"] = FORWARD, ["move forward"] = FORWARD, ["go forward"] = FORWARD,
  ["step forward"] = FORWARD, ["ahead"] = FORWARD, ["move ahead"] = FORWARD,
  ["backward"] = BACKWARD, ["backwards"] = BACKWARD, ["back"] = BACKWARD,
  ["move backward"] = BACKWARD, ["move back"] = BACKWARD, ["go back"] = BACKWARD,
  ["step back"] = BACKWARD, ["step backward"] = BACKWARD,
  ["left"] = STEP_LEFT, ["step left"] = STEP_LEFT, ["move left"] = STEP_LEFT,
  ["go left"] = STEP_LEFT, ["strafe left"] = STEP_LEFT,
  ["right"] = STEP_RIGHT, ["step right"] = STEP_RIGHT, ["move right"] = STEP_RIGHT,
  ["go right"] = STEP_RIGHT, ["strafe right"] = STEP_RIGHT,
  ["turn left"] = TURN_LEFT, ["rotate left"] = TURN_LEFT,
  ["turn right"] = TURN_RIGHT, ["rotate right"] = TURN_RIGHT,
  ["zap"] = FIRE_ZAP, ["fire"] = FIRE_ZAP, ["fire zap"] = FIRE_ZAP, ["shoot"] = FIRE_ZAP,
  ["attack"] = FIRE_ZAP, ["fire beam"] = FIRE_ZAP,
  ["stay"] = 0, ["wait"] = 0, ["noop"] = 0, ["no op"] = 0, ["do nothing"] = 0,
  ["stay put"] = 0,
}

-- The first move of a shortest path from agent a to (tx, ty), around walls and players.
local route_dist, route_queue = {}, {}
local function step_towards(a, tx, ty)
  if px[a] == tx and py[a] == ty then return 0 end
  for c = 1, W * H do route_dist[c] = INF end
  local target = cell_of(tx, ty)
  route_dist[target] = 0
  local head, tail = 1, 1
  route_queue[1] = target
  while head <= tail do
    local c = route_queue[head]
    head = head + 1
    local d = route_dist[c] + 1
    local list = NB4[c]
    for k = 1, #list do
      local n = list[k]
      if route_dist[n] > d and (occ[n] == 0 or occ[n] == a + 1) then
        route_dist[n] = d
        tail = tail + 1
        route_queue[tail] = n
      end
    end
  end
  local best, choice = route_dist[cell_of(px[a], py[a])], nil
  for k = 1, 4 do
    local rel = PREFER[k]
    local dir = (face[a] + rel) % 4
    local nx, ny = px[a] + FX[dir], py[a] + FY[dir]
    if nx >= 0 and nx < W and ny >= 0 and ny < H then
      local c = cell_of(nx, ny)
      if not wall[c] and occ[c] == 0 and route_dist[c] < best then
        best, choice = route_dist[c], rel
      end
    end
  end
  if choice == nil then
    error(string.format("no way from %s to %s now (walls or players block it)",
                        pos(px[a], py[a]), pos(tx, ty)), 0)
  end
  return CODE_OF_REL[choice]
end

local function go_to(a, row, col)
  if polis.episode() == 0 then error("'go to' needs an episode: reset the env first", 0) end
  if row < 0 or row >= H or col < 0 or col >= W then
    error(string.format("position [%d, %d] is outside the %d x %d map (rows x columns)", row,
                        col, H, W), 0)
  end
  if wall[cell_of(col, row)] then
    error(string.format("position [%d, %d] is a wall", row, col), 0)
  end
  if not on_map[a] then return 0 end
  return step_towards(a, col, row)
end

local function parse_position(s)
  local r, c = s:match("^%s*[%[%(]?%s*(%-?%d+)%s*,%s*(%-?%d+)%s*[%]%)]?%s*$")
  if r then return math.tointeger(tonumber(r)), math.tointeger(tonumber(c)) end
end

local function parse_text(a, input)
  local s = input:lower():gsub("[_%-]", " "):gsub("%s+", " "):gsub("%.$", "")
  s = s:match("^%s*(.-)%s*$")
  local code = WORDS[s]
  if code then return ACTION_ID[code] end
  local rest = s:match("^go to (.*)$") or s:match("^move to (.*)$") or s:match("^walk to (.*)$")
  if rest then
    local r, c = parse_position(rest:gsub("^position ", ""))
    if not r then
      error(string.format("'go to' needs a position [row, column], got '%s'", rest), 0)
    end
    return ACTION_ID[go_to(a, r, c)]
  end
  if s:match("^turn ") or s:match("^move ") or s:match("^step ") then
    error(string.format("cannot parse '%s': say forward, backward, step left, step right, " ..
                        "turn left, turn right, zap, stay, or go to [row, column]", input), 0)
  end
  return nil
end

local function parse_json(a, input)
  local name = input:match('"action"%s*:%s*"([^"]*)"')
  if not name then return nil end
  local dir = input:match('"direction"%s*:%s*"([^"]*)"')
  local r, c = input:match('"position"%s*:%s*%[%s*(%-?%d+)%s*,%s*(%-?%d+)%s*%]')
  name = name:lower():gsub("[_%-]", " ")
  if name == "go to" or name == "move to" then
    if not r then error('{"action": "go_to"} needs "position": [row, column]', 0) end
    return ACTION_ID[go_to(a, math.tointeger(tonumber(r)), math.tointeger(tonumber(c)))]
  end
  if (name == "move" or name == "step" or name == "turn") and dir then
    name = name .. " " .. dir:lower()
  end
  local code = WORDS[name]
  if code == nil then
    error(string.format("unknown action '%s' (actions: forward, backward, step_left, " ..
                        "step_right, turn_left, turn_right, fire_zap, noop, go_to)", name), 0)
  end
  return ACTION_ID[code]
end

polis.action_parser(function(a, input)
  if input:sub(1, 1) == "{" then return parse_json(a, input) end
  return parse_text(a, input)
end)

-- ---- plans (macro actions) ------------------------------------------------------------------
-- Multi-tick commands for LLM agents (docs/clients.md, "Plans"): HARVEST walks to the nearest
-- apple and eats, as the pacifist bot does; GOTO walks a shortest path to a position. A plan
-- waits while its player is off the map (zapped) and gives up after PLAN_PATIENCE ticks in a
-- row without a way forward.
local PLAN_PATIENCE = 30

polis.macro{
  name = "HARVEST", usage = "HARVEST [<n>]",
  doc = "Walks to the nearest apple and eats until n more apples (default 1) are eaten; " ..
        "impossible when no apple is left, or no way to one, for 30 ticks in a row.",
  start = function(a, args)
    local n = 1
    if args ~= "" then
      n = math.tointeger(tonumber(args))
      if not n or n < 1 or n > 1000000 then
        return nil, string.format("HARVEST takes a number of apples from 1 to 1000000, got '%s'",
                                  args)
      end
    end
    -- ret[a] holds the apples eaten this episode up to the last step, whoever chose them
    return {n = n, base = ret[a], stuck = 0}
  end,
  next = function(a, plan)
    local got = ret[a] - plan.base
    if got >= plan.n then
      return "done", string.format("ate %d apple%s", got, got == 1 and "" or "s")
    end
    if not on_map[a] then return "running", 0 end
    local code = live_apples > 0 and bot_action(a, false) or 0
    if code ~= 0 then
      plan.stuck = 0
      return "running", ACTION_ID[code]
    end
    plan.stuck = plan.stuck + 1
    if plan.stuck >= PLAN_PATIENCE then
      return "impossible", string.format("%s for %d ticks (ate %d of %d)",
                                         live_apples == 0 and "no apple left on the map" or
                                         "no way to an apple", PLAN_PATIENCE, got, plan.n)
    end
    return "running", 0
  end}

-- GOTO and EXPLORE: a walk to a position, its start (the position checked) and its steps.
local function walk_start(name, args)
  local r, c = parse_position(args:gsub("^%s*(%-?%d+)%s+(%-?%d+)%s*$", "%1, %2"))
  if not r then
    return nil, string.format("%s needs a position: <row> <column>, got '%s'", name, args)
  end
  if r < 0 or r >= H or c < 0 or c >= W then
    return nil, string.format("position [%d, %d] is outside the %d x %d map (rows x columns)",
                              r, c, H, W)
  end
  if wall[cell_of(c, r)] then return nil, string.format("position [%d, %d] is a wall", r, c) end
  return {x = c, y = r, stuck = 0}
end

local function arrived_at(_, plan) return "arrived at " .. pos(plan.x, plan.y) end

-- A walk's next step; `arrived(a, plan)` gives the account once the player is there.
local function walk_next(a, plan, arrived)
  if on_map[a] and px[a] == plan.x and py[a] == plan.y then return "done", arrived(a, plan) end
  if not on_map[a] then return "running", 0 end
  local ok, code = pcall(step_towards, a, plan.x, plan.y)
  if ok then
    plan.stuck = 0
    return "running", ACTION_ID[code]
  end
  plan.stuck = plan.stuck + 1
  if plan.stuck >= PLAN_PATIENCE then
    return "impossible", string.format("%s for %d ticks", code, PLAN_PATIENCE)
  end
  return "running", 0
end

polis.macro{
  name = "GOTO", usage = "GOTO <row> <column>",
  doc = "Walks a shortest path to the position ([row, column], as the text view gives them), " ..
        "around walls and players; impossible when there is no way for 30 ticks in a row.",
  start = function(a, args) return walk_start("GOTO", args) end,
  next = function(a, plan) return walk_next(a, plan, arrived_at) end}

-- The high-level actions of the Melting Pot LLM study (seeds/004, §3.1.1): "immobilize
-- player (name) at (x, y)", "stay put" and "explore (x, y)" ("go to (x, y)" is GOTO).
local function agent_by_name(word)
  for b = 0, N - 1 do
    if polis.agent_name(b):lower() == word:lower() then return b end
  end
  if word:match("^%d+$") and tonumber(word) < N then return math.tointeger(tonumber(word)) end
  return nil
end

local function agent_names()
  local names = {}
  for b = 0, N - 1 do names[#names + 1] = polis.agent_name(b) end
  return table.concat(names, ", ")
end

do -- a block: its locals do not count towards the main chunk's limit of 200
local IMMOBILIZE_TICKS = 60

local function explored(a, plan)
  local n = #observe(a).apples
  return string.format("explored %s: %d apple%s in view", pos(plan.x, plan.y), n,
                       n == 1 and "" or "s")
end

polis.macro{
  name = "IMMOBILIZE", usage = "IMMOBILIZE <player> [<row> <column>]",
  doc = "Chases the player (its position now; [row, column] is where it was seen) and zaps " ..
        "it when it is in the beam; done when this player's beam hits it, impossible when " ..
        "it is out of the game or not hit within 60 ticks.",
  start = function(a, args)
    local name, rest = args:match("^%s*(%S+)%s*(.-)%s*$")
    if not name or name == "" then
      return nil, string.format("IMMOBILIZE needs a player name (players: %s)", agent_names())
    end
    name = name:gsub("[,;:]$", "")
    local b = agent_by_name(name)
    if not b then
      return nil, string.format("IMMOBILIZE: no player named '%s' (players: %s)", name,
                                agent_names())
    end
    if b == a then return nil, "IMMOBILIZE: a player cannot immobilize itself" end
    rest = rest:gsub("^[Aa][Tt]%s+", ""):gsub("^position%s+", "")
    if rest ~= "" then
      local r, c = parse_position(rest:gsub("^%s*(%-?%d+)%s+(%-?%d+)%s*$", "%1, %2"))
      if not r then
        return nil, string.format("IMMOBILIZE: '%s' is not a position <row> <column>", rest)
      end
      if r < 0 or r >= H or c < 0 or c >= W then
        return nil, string.format("position [%d, %d] is outside the %d x %d map (rows x " ..
                                  "columns)", r, c, H, W)
      end
    end
    return {target = b, t0 = polis.tick(), ticks = 0, stuck = 0}
  end,
  next = function(a, plan)
    local b = plan.target
    local name = polis.agent_name(b)
    if zapped_by[b] == a and zapped_at[b] >= plan.t0 then
      return "done", string.format("immobilized %s", name)
    end
    plan.ticks = plan.ticks + 1
    if plan.ticks > IMMOBILIZE_TICKS then
      return "impossible", string.format("%s was not hit within %d ticks", name,
                                         IMMOBILIZE_TICKS)
    end
    if not on_map[a] then return "running", 0 end
    if not on_map[b] then
      return "impossible", string.format("%s is out of the game", name)
    end
    if p.beam_length == 0 then return "impossible", "zapping is off in this game" end
    if target_in_beam(a, face[a], b) then
      return "running", cool[a] == 0 and ACTION_ID[FIRE_ZAP] or 0
    end
    if target_in_beam(a, (face[a] + 1) % 4, b) then return "running", ACTION_ID[TURN_RIGHT] end
    if target_in_beam(a, (face[a] + 3) % 4, b) then return "running", ACTION_ID[TURN_LEFT] end
    local ok, code = pcall(step_towards, a, px[b], py[b])
    if ok and code ~= 0 then return "running", ACTION_ID[code] end
    -- next to it but not facing it: turn (twice when it is behind)
    return "running", ACTION_ID[TURN_RIGHT]
  end}

polis.macro{
  name = "STAY", usage = "STAY [<ticks>]",
  doc = "Stays put for the given number of ticks (default 1).",
  start = function(a, args)
    local n = 1
    if args:match("%S") then
      n = math.tointeger(tonumber((args:gsub("%s*[Pp][Uu][Tt]%s*", ""))))
      if not n or n < 1 or n > 1000000 then
        return nil, string.format("STAY takes a number of ticks from 1 to 1000000, got '%s'",
                                  args)
      end
    end
    return {left = n, n = n}
  end,
  next = function(a, plan)
    if plan.left == 0 then
      return "done", string.format("stayed %d tick%s", plan.n, plan.n == 1 and "" or "s")
    end
    plan.left = plan.left - 1
    return "running", 0
  end}

polis.macro{
  name = "EXPLORE", usage = "EXPLORE <row> <column>",
  doc = "Walks to the position to see what is around it; done on arrival (saying how many " ..
        "apples are in view), impossible when there is no way for 30 ticks in a row.",
  start = function(a, args) return walk_start("EXPLORE", args) end,
  next = function(a, plan) return walk_next(a, plan, explored) end}
end

-- ---- looks (plugin ABI 1.5): what recordings, replays and the viewer draw ----------------------

-- The ground (floor and walls), the apple cells (a live apple, grass that can regrow one, or
-- bare ground with no live apple near), and per player its position, facing, whether it is
-- on the map, its apples this episode and its zap cooldown. Both layers are kept between
-- scenes (plugin ABI 1.6): the ground is written when the kernel cleared them (fresh), the
-- apple cells only when their kind changed since the last scene.
do -- a block: its locals do not count towards the main chunk's limit of 200
local LOOK -- the ids polis.look returns, read by the scene function
local SHOWN = {} -- [apple]: the kind the apples layer shows now
LOOK = polis.look{
  kinds = {
    {name = "floor", glyph = ".", color = "#3b3024", shape = "square"},
    {name = "wall", glyph = "#", color = "#7a7a7a", shape = "square"},
    {name = "apple", glyph = "@", color = "#d83a3a", shape = "circle"},
    {name = "grass", glyph = ",", color = "#4f8a3a", shape = "square"},
    {name = "bare", glyph = "_", color = "#5a4a36", shape = "square"},
  },
  layers = {"ground", "apples"},
  stats = {
    {name = "apples", group = "inventory"},
    {name = "cooldown", group = "vitals"},
  },
  keep = true,
  scene = function(s, fresh)
    local K = LOOK.kinds
    local apple, grass, bare = K.apple, K.grass, K.bare
    if fresh then
      for y = 0, H - 1 do
        for x = 0, W - 1 do s:tile(0, x, y, wall[cell_of(x, y)] and K.wall or K.floor) end
      end
      for i = 1, NA do
        local k = alive[i] and apple or (nbr[i] > 0 and grass or bare)
        s:tile(1, AX[i], AY[i], k)
        SHOWN[i] = k
      end
    else -- only the apples marked since the last scene can look different
      for j = 1, n_scene_dirty do
        local i = scene_dirty[j]
        local k = alive[i] and apple or (nbr[i] > 0 and grass or bare)
        if SHOWN[i] ~= k then
          s:tile(1, AX[i], AY[i], k)
          SHOWN[i] = k
        end
      end
    end
    for j = 1, n_scene_dirty do scene_marked[scene_dirty[j]] = false end
    n_scene_dirty = 0
    for a = 0, N - 1 do
      if on_map[a] then
        s:agent(a, px[a], py[a], face[a] + 1, true)
      else
        s:agent(a, -1, -1, 0, false)
      end
      s:stat(a, 0, ret[a] or 0)
      s:stat(a, 1, cool[a] or 0)
    end
  end,
}
end
