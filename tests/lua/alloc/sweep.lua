-- alloc/sweep.lua: uses most of the Lua API, for the failing-allocator sweep
-- (test_lua_alloc.c). Its output does not matter; every allocation it causes does.
local p = polis.params{{key = "n", type = "int", default = 3}, {key = "s", type = "string", default = "x"}}
local l = polis.grid_layer("cells")
polis.event("sweep.ev", {{"agent", "i32"}, {"w", "f64"}})
local got = {}
polis.subscribe("sweep.ev", function(ev) got[#got + 1] = ev.agent .. ":" .. ev.w end)
polis.action{name = "mark", handler = function(a) polis.grid_set(l, a, 0, polis.tick()) end,
             legal = function(a) return a < p.n end}
polis.on("reset", function()
  got = {}
  for i = 0, 3 do polis.grid_set(l, i, 1, math.random(100)) end
end)
polis.on("post", function()
  for a = 0, polis.n_agents() - 1 do polis.publish("sweep.ev", {agent = a, w = a / 2}) end
  local t = {}
  for i = 1, 50 do t[i] = string.format("%s%d", p.s, i) end
  polis.log(table.concat(t, ","):sub(1, 20), #got)
end)
polis.reward("r", function(a) return #got + a end)
polis.reward_transform("t", function(r) r[0] = r[0] + 1 end)
polis.observation{name = "o", dtype = "i32", shape = {2}, write = function(a, buf)
  buf[1] = polis.grid_get(l, a, 1)
  buf[2] = #got
end}
local board = {}
polis.shared_observation{name = "board", dtype = "i16", shape = {2}, values = board}
polis.shared_observation{name = "ticks", dtype = "f32", shape = {1}, write = function(buf)
  buf[1] = polis.tick()
  board[1], board[2] = #got, polis.tick()
end}
