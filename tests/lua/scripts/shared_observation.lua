-- scenario: {"agents": 3, "max_steps": 2, "grid": {"width": 4, "height": 3}}
-- dump: obs shared
-- Shared observation fields (polis.shared_observation): held once per env, beside the
-- per-agent record, written once per reset and step by write(buf) (no agent argument) or
-- read by the host from a table of the field's elements. The buffer starts zeroed on every
-- call; a grid_view may fill it.
local L = polis.grid_layer("v")
polis.on("reset", function() -- cell (x, y) holds 10y + x + 1
  for i = 0, 11 do polis.grid_set(L, i % 4, i // 4, i // 4 * 10 + i % 4 + 1) end
end)
polis.observation{name = "me", dtype = "u8", shape = {1}, write = function(agent, buf)
  buf[1] = agent
end}
local calls = 0
local id = polis.shared_observation{name = "clock", doc = "tick and writes", dtype = "i32",
  shape = {2}, write = function(...)
    calls = calls + 1
    local n, buf = select("#", ...), select(1, ...)
    polis.log("clock write", n, #buf, calls)
    buf[1] = polis.tick()
    if polis.tick() > 0 then buf[2] = -calls end -- zero at reset: the buffer starts zeroed
  end}
polis.log("clock id", id)
local board = {}
polis.shared_observation{name = "board", dtype = "f32", shape = {2, 2}, values = board}
polis.shared_observation{name = "map", dtype = "u8", shape = {3, 3}, write = function(buf)
  polis.grid_view(buf, L, 1, 1, 0, 1, 1, 1, 1, 0, 1, 99)
end}
polis.on("reset", function() board[1], board[2], board[3], board[4] = 0.5, nil, -2, 8 end)
polis.on("end", function()
  board[1], board[2], board[3], board[4] = polis.tick() + 0.25, 1, nil, nil
end)
-- expect: clock id 0
-- expect: clock write 1 2 1
-- expect: t0 obs me a0: 0
-- expect: t0 obs me a1: 1
-- expect: t0 obs me a2: 2
-- expect: t0 shared clock: 0 0
-- expect: t0 shared board: 0.5 0 -2 8
-- expect: t0 shared map: 1 2 3 11 99 13 21 22 23
-- expect: clock write 1 2 2
-- expect: t1 obs me a0: 0
-- expect: t1 obs me a1: 1
-- expect: t1 obs me a2: 2
-- expect: t1 shared clock: 1 -2
-- expect: t1 shared board: 0.25 1 0 0
-- expect: t1 shared map: 1 2 3 11 99 13 21 22 23
-- expect: clock write 1 2 3
-- expect: t2 obs me a0: 0
-- expect: t2 obs me a1: 1
-- expect: t2 obs me a2: 2
-- expect: t2 shared clock: 2 -3
-- expect: t2 shared board: 1.25 1 0 0
-- expect: t2 shared map: 1 2 3 11 99 13 21 22 23
