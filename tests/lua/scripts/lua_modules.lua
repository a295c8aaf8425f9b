-- scenario: {"agents": 1, "max_steps": 3}
-- The engine's Lua modules (lua/polis/*.lua): grid geometry and beams, timers, json.
local grid = polis.require("grid")
local timers = polis.require("timers")
local json = polis.require("json")

local function cells(list)
  local t = {}
  for _, c in ipairs(list) do t[#t + 1] = c[1] .. "," .. c[2] end
  return table.concat(t, " ")
end

-- facings: 0 north (y - 1), 1 east, 2 south, 3 west; relative(facing, ahead, right)
polis.log("turn", grid.turn(0, -1), grid.turn(3, 1), grid.turn(1, 2))
local rel = {}
for f = 0, 3 do rel[#rel + 1] = string.format("%d,%d", grid.relative(f, 2, 1)) end
polis.log("relative", table.concat(rel, " "))
polis.log("facing", grid.facing("North"), grid.facing("w"), grid.facing("up"))
polis.log("moves", grid.absolute(1, 3), grid.relative_move(1, 0))
-- Lab2D's beam: side lines level with the firer (length - r + 1 cells), then the centre
polis.log("beam 3/1 N", cells(grid.beam_cells(5, 5, 0, 3, 1)))
polis.log("beam 3/1 E", cells(grid.beam_cells(5, 5, 1, 3, 1)))
polis.log("beam 4/1 count", #grid.beam_cells(5, 5, 2, 4, 1))
polis.log("beam 3/2 count", #grid.beam_cells(5, 5, 3, 3, 2))
polis.log("beam 2/0", cells(grid.beam_cells(0, 0, 2, 2, 0)))
-- blocking: (4,5) stops the left side at its first cell, so the r = 2 line is skipped;
-- (6,4) stops the right r = 1 line after one cell; (5,3) stops the centre line
local blockers = {["4,5"] = true, ["6,4"] = true, ["5,3"] = true}
local seen = {}
grid.beam(5, 5, 0, 3, 2, function(x, y)
  seen[#seen + 1] = {x, y}
  return blockers[x .. "," .. y] == true
end)
polis.log("blocked", cells(seen))
-- discs (Euclidean, as Melting Pot's regrowth neighbourhood): radius 2 has 12 cells + centre
polis.log("disc", #grid.disc(2), #grid.disc(2, true), #grid.disc(1), #grid.disc(1.5))
local map = grid.parse_map("\nW.A\nAQW\n", "WAQ.")
polis.log("map", map.width, map.height, map.char(2, 0), cells(map.cells["A"]))
for _, bad in ipairs{"WW\nW", "WX\nWW", ""} do
  local ok, e = pcall(grid.parse_map, bad, "W.")
  polis.log(ok, e)
end
local ids, n = grid.clusters({{0, 0}, {2, 0}, {5, 0}, {6, 1}, {9, 9}}, 2)
polis.log("clusters", n, table.concat(ids, " "))
-- timers: in tick order, then in the order they were scheduled; run catches up
local sched = timers.new()
local function say(what) polis.log("timer", what) end
sched:at(5, say, "5a")
sched:at(3, say, "3")
sched:at(5, say, "5b")
sched:at(3, function() sched:at(3, say, "3 again") end)
polis.log("pending", sched:pending())
sched:run(2)
sched:run(4)
polis.log("pending", sched:pending())
sched:run(10)
sched:at(1, say, "cleared")
sched:clear()
sched:run(10)
polis.log("pending", sched:pending())
local ok, e = pcall(sched.at, sched, 1.5, say)
polis.log(ok, e)
-- json: sorted keys, arrays, empty object, escapes, floats, errors with the path
polis.log(json.encode({z = 1, a = {1, 2, {}}, o = json.object(), s = "q\"\\\n\1", f = 0.1,
                       n = json.null, t = true, big = 2.0, neg = -3}))
for _, bad in ipairs{{x = 0 / 0}, {[1] = 1, [3] = 3}, {f = print}, {x = {y = {math.huge}}}} do
  local ok2, e2 = pcall(json.encode, bad)
  polis.log(ok2, e2)
end
-- expect: turn 3 0 3
-- expect: relative 1,-2 2,1 -1,2 -2,-1
-- expect: facing 0 3 nil
-- expect: moves 0 3
-- expect: beam 3/1 N 4,5 4,4 4,3 6,5 6,4 6,3 5,4 5,3 5,2
-- expect: beam 3/1 E 5,4 6,4 7,4 5,6 6,6 7,6 6,5 7,5 8,5
-- expect: beam 4/1 count 12
-- expect: beam 3/2 count 13
-- expect: beam 2/0 0,1 0,2
-- expect: blocked 4,5 6,5 6,4 7,5 7,4 5,4 5,3
-- expect: disc 12 13 4 8
-- expect: map 3 2 A 2,0 0,1
-- expect: false grid.parse_map: row 2 has 1 characters, row 1 has 2
-- expect: false grid.parse_map: row 1, column 2: unknown character 'X' (the map may use "W.")
-- expect: false grid.parse_map: the map is empty
-- expect: clusters 3 1 1 2 2 3
-- expect: pending 4
-- expect: timer 3
-- expect: timer 3 again
-- expect: pending 2
-- expect: timer 5a
-- expect: timer 5b
-- expect: pending 0
-- expect: false timers: the tick must be an integer, got 1.5
-- expect: {"a":[1,2,[]],"big":2.0,"f":0.1,"n":null,"neg":-3,"o":{},"s":"q\"\\\n\u0001","t":true,"z":1}
-- expect: false json.encode: value.x: NaN is not a JSON number
-- expect: false json.encode: value: object key 1 is not a string
-- expect: false json.encode: value.f: cannot encode a function
-- expect: false json.encode: value.x.y[1]: inf is not a JSON number
