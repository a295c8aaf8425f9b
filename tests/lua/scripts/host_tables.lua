-- scenario: {"agents": 3, "max_steps": 2, "grid": {"width": 4, "height": 3}}
-- dump: obs rewards
-- Values the host reads without a call into Lua per agent: an observation field written by
-- one write_all(buf) call for every agent (agent a's elements start at a * n + 1), a field
-- read from a table (t[agent]: a number, an array, or nil for zeros) and a reward read from
-- a table (t[agent], a number for every agent).
local L = polis.grid_layer("v")
polis.on("reset", function()
  for y = 0, 2 do
    for x = 0, 3 do polis.grid_set(L, x, y, y * 10 + x + 1) end
  end
end)
local calls = 0
polis.observation{name = "all", dtype = "i16", shape = {2}, write_all = function(buf)
  calls = calls + 1
  polis.log("write_all", #buf, calls)
  for a = 0, 2 do
    buf[a * 2 + 1] = -a
    if a ~= 1 then buf[a * 2 + 2] = polis.tick() * 100 + a end -- agent 1's second stays 0
  end
end}
-- a 3x3 window per agent, each with its own centre value (grid_view's `center`)
polis.observation{name = "win", dtype = "u8", shape = {3, 3}, write_all = function(buf)
  for a = 0, 2 do polis.grid_view(buf, L, 1 + a % 2, 1, a, 1, 1, 1, 1, 0, a * 9 + 1, 90 + a) end
end}
local one, many, gain = {}, {}, {}
polis.observation{name = "one", dtype = "f32", shape = {1}, values = one}
polis.observation{name = "many", dtype = "u8", shape = {3}, values = many}
polis.reward("gain", gain)
polis.reward("fn", function(a) return a end) -- the function form still works beside it
-- rewards are summed after the post phase: the end hook's values count at the next step
polis.on("end", function()
  for a = 0, 2 do gain[a] = (polis.tick() + 1) * 0.5 * a end
  one[0], one[1], one[2] = 0.25, nil, {2.5} -- nil: zeros; an array of one number
  many[0], many[1], many[2] = {1, 2, 3}, nil, {nil, 8, 9} -- a nil element: 0
end)
polis.on("reset", function()
  for a = 0, 2 do gain[a] = 0 end
  one[0], one[1], one[2] = 1, 2, 3
  many[0], many[1], many[2] = nil, {4, 5, 6}, nil
end)
-- expect: write_all 6 1
-- expect: t0 obs all a0: 0 0
-- expect: t0 obs all a1: -1 0
-- expect: t0 obs all a2: -2 2
-- expect: t0 obs win a0: 1 2 3 11 90 13 21 22 23
-- expect: t0 obs win a1: 4 14 24 3 91 23 2 12 22
-- expect: t0 obs win a2: 23 22 21 13 92 11 3 2 1
-- expect: t0 obs one a0: 1
-- expect: t0 obs one a1: 2
-- expect: t0 obs one a2: 3
-- expect: t0 obs many a0: 0 0 0
-- expect: t0 obs many a1: 4 5 6
-- expect: t0 obs many a2: 0 0 0
-- expect: t0 rewards: 0 0 0
-- expect: write_all 6 2
-- expect: t1 obs all a0: 0 100
-- expect: t1 obs all a1: -1 0
-- expect: t1 obs all a2: -2 102
-- expect: t1 obs win a0: 1 2 3 11 90 13 21 22 23
-- expect: t1 obs win a1: 4 14 24 3 91 23 2 12 22
-- expect: t1 obs win a2: 23 22 21 13 92 11 3 2 1
-- expect: t1 obs one a0: 0.25
-- expect: t1 obs one a1: 0
-- expect: t1 obs one a2: 2.5
-- expect: t1 obs many a0: 1 2 3
-- expect: t1 obs many a1: 0 0 0
-- expect: t1 obs many a2: 0 8 9
-- expect: t1 rewards: 0 1 2
-- expect: write_all 6 3
-- expect: t2 obs all a0: 0 200
-- expect: t2 obs all a1: -1 0
-- expect: t2 obs all a2: -2 202
-- expect: t2 obs win a0: 1 2 3 11 90 13 21 22 23
-- expect: t2 obs win a1: 4 14 24 3 91 23 2 12 22
-- expect: t2 obs win a2: 23 22 21 13 92 11 3 2 1
-- expect: t2 obs one a0: 0.25
-- expect: t2 obs one a1: 0
-- expect: t2 obs one a2: 2.5
-- expect: t2 obs many a0: 1 2 3
-- expect: t2 obs many a1: 0 0 0
-- expect: t2 obs many a2: 0 8 9
-- expect: t2 rewards: 0 1.5 3
