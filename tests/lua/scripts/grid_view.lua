-- scenario: {"agents": 4, "max_steps": 1, "grid": {"width": 5, "height": 4}}
-- dump: obs
-- polis.grid_view copies the egocentric window of a layer, rotated to the agent's facing
-- (agent a faces a: north, east, south, west), into an observation buffer; cells outside a
-- bounded grid read `outside`; `first` places the window inside a larger field.
local L = polis.grid_layer("v")
local BIG = polis.grid_layer("big")
polis.on("reset", function()
  for y = 0, 3 do
    for x = 0, 4 do polis.grid_set(L, x, y, y * 10 + x + 1) end
  end
  polis.grid_set(BIG, 0, 0, 300)
  polis.grid_set(BIG, 2, 3, -5)
end)
polis.observation{name = "w", dtype = "u8", shape = {3, 3}, write = function(a, buf)
  polis.grid_view(buf, L, 2, 1, a, 1, 1, 1, 1)
end}
polis.observation{name = "edge", dtype = "i8", shape = {7}, write = function(a, buf)
  polis.grid_view(buf, L, 0, 0, 0, 2, 0, 1, 0, -1, 2)
end}
-- A u8 window partly off the map, for each facing (agent a faces a): at the top-right corner
-- and at the left edge, clipped along the rows and across them.
polis.observation{name = "clip", dtype = "u8", shape = {2, 4, 3}, write = function(a, buf)
  polis.grid_view(buf, L, 4, 0, a, 2, 1, 1, 1, 99)
  polis.grid_view(buf, L, 0, 2, a, 1, 2, 0, 2, 98, 13)
end}
local kept
local function try(...)
  local ok, e = pcall(polis.grid_view, ...)
  polis.log(ok, e)
end
polis.observation{name = "errs", dtype = "u8", shape = {4}, write = function(a, buf)
  if a ~= 0 or polis.tick() ~= 0 then return end
  try(buf, L, 2, 1, 4, 0, 0, 0, 0)
  try(buf, L, 2, 1, 0, 1, 1, 1, 1)
  try(buf, L, 2, 1, 0, 0, 0, 0, 0, 300)
  try(buf, BIG, 0, 0, 0, 0, 0, 0, 0)
  try(buf, BIG, 0, 1, 0, 1, 0, 1, 0) -- values that do not fit, in clipped windows
  try(buf, BIG, 2, 3, 2, 1, 0, 1, 0)
  try(buf, L, 2, 1, 0, -1, 0, 0, 0)
  try({}, L, 2, 1, 0, 0, 0, 0, 0)
  try(buf, 5, 2, 1, 0, 0, 0, 0, 0)
  try(buf, L, 2, 1, 0, 0, 0, 0, 0, 0, 4)
  try(buf, L, 2, 1, 0, 0, 0, 0, 0, 0, 5)
  kept = buf
end}
polis.on("post", function()
  local ok, e = pcall(polis.grid_view, kept, L, 0, 0, 0, 0, 0, 0, 0)
  polis.log("kept:", ok, e)
end)
-- expect: false polis.grid_view: facing 4 is not 0 (north), 1 (east), 2 (south) or 3 (west)
-- expect: false polis.grid_view: a 3x3 window from element 1 does not fit observation 'errs' (4 elements)
-- expect: false polis.grid_view: outside value 300 does not fit observation 'errs' (u8)
-- expect: false polis.grid_view: cell (0, 0) of layer 1 holds 300, outside the u8 range of observation 'errs' (agent 0)
-- expect: false polis.grid_view: cell (0, 0) of layer 1 holds 300, outside the u8 range of observation 'errs' (agent 0)
-- expect: false polis.grid_view: cell (2, 3) of layer 1 holds -5, outside the u8 range of observation 'errs' (agent 0)
-- expect: false bad argument #6 to 'polis.grid_view' (ahead = -1 is not in [0, 4096])
-- expect: false bad argument #1 to 'polis.grid_view' (observation buffer expected, got table)
-- expect: false polis.grid_view: layer 5 is not in [0, 1]
-- expect: true nil
-- expect: false polis.grid_view: a 1x1 window from element 5 does not fit observation 'errs' (4 elements)
-- expect: t0 obs w a0: 2 3 4 12 13 14 22 23 24
-- expect: t0 obs w a1: 4 14 24 3 13 23 2 12 22
-- expect: t0 obs w a2: 24 23 22 14 13 12 4 3 2
-- expect: t0 obs w a3: 22 12 2 23 13 3 24 14 4
-- expect: t0 obs edge a0: 0 -1 -1 -1 -1 -1 1
-- expect: t0 obs edge a1: 0 -1 -1 -1 -1 -1 1
-- expect: t0 obs edge a2: 0 -1 -1 -1 -1 -1 1
-- expect: t0 obs edge a3: 0 -1 -1 -1 -1 -1 1
-- expect: t0 obs clip a0: 99 99 99 99 99 99 4 5 99 14 15 99 11 12 13 21 22 23 31 32 33 98 98 98
-- expect: t0 obs clip a1: 99 99 99 99 99 99 99 5 15 99 4 14 22 32 98 21 31 98 98 98 98 98 98 98
-- expect: t0 obs clip a2: 99 25 24 99 15 14 99 5 4 99 99 99 31 98 98 21 98 98 11 98 98 1 98 98
-- expect: t0 obs clip a3: 13 3 99 14 4 99 15 5 99 99 99 99 98 98 98 21 11 1 22 12 2 23 13 3
-- expect: t0 obs errs a0: 0 0 0 13
-- expect: t0 obs errs a1: 0 0 0 0
-- expect: t0 obs errs a2: 0 0 0 0
-- expect: t0 obs errs a3: 0 0 0 0
-- expect: kept: false polis.grid_view: the observation buffer is only valid while its writer runs (do not keep it)
-- expect: t1 obs w a0: 2 3 4 12 13 14 22 23 24
-- expect: t1 obs w a1: 4 14 24 3 13 23 2 12 22
-- expect: t1 obs w a2: 24 23 22 14 13 12 4 3 2
-- expect: t1 obs w a3: 22 12 2 23 13 3 24 14 4
-- expect: t1 obs edge a0: 0 -1 -1 -1 -1 -1 1
-- expect: t1 obs edge a1: 0 -1 -1 -1 -1 -1 1
-- expect: t1 obs edge a2: 0 -1 -1 -1 -1 -1 1
-- expect: t1 obs edge a3: 0 -1 -1 -1 -1 -1 1
-- expect: t1 obs clip a0: 99 99 99 99 99 99 4 5 99 14 15 99 11 12 13 21 22 23 31 32 33 98 98 98
-- expect: t1 obs clip a1: 99 99 99 99 99 99 99 5 15 99 4 14 22 32 98 21 31 98 98 98 98 98 98 98
-- expect: t1 obs clip a2: 99 25 24 99 15 14 99 5 4 99 99 99 31 98 98 21 98 98 11 98 98 1 98 98
-- expect: t1 obs clip a3: 13 3 99 14 4 99 15 5 99 99 99 99 98 98 98 21 11 1 22 12 2 23 13 3
-- expect: t1 obs errs a0: 0 0 0 0
-- expect: t1 obs errs a1: 0 0 0 0
-- expect: t1 obs errs a2: 0 0 0 0
-- expect: t1 obs errs a3: 0 0 0 0
