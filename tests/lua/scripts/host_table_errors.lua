-- scenario: {"agents": 2, "max_steps": 1, "grid": {"width": 4, "height": 3}}
-- episodes: 9
-- on-error: reset
-- Tables the host reads and write_all buffers, filled wrongly: each episode's reset or step
-- fails one way, naming the file:line of the registration (nothing of the script runs while
-- the host reads a table), the agent and the tick.
local L = polis.grid_layer("v")
local ok, e = pcall(polis.observation, {name = "both", dtype = "u8", shape = {1}, values = {},
                                        write = function() end})
polis.log(e)
ok, e = pcall(polis.observation, {name = "none", dtype = "u8", shape = {1}})
polis.log(e)
ok, e = pcall(polis.observation, {name = "bad", dtype = "u8", shape = {1}, values = 3})
polis.log(e)
ok, e = pcall(polis.reward, "r", "x")
polis.log(e)
local vals, arr, gain = {}, {}, {}
polis.observation{name = "v", dtype = "u8", shape = {1}, values = vals}
polis.observation{name = "a", dtype = "i8", shape = {2}, values = arr}
polis.reward("gain", gain)
polis.observation{name = "w", dtype = "u8", shape = {2, 2}, write_all = function(buf)
  local ep = polis.episode()
  if ep == 6 then buf[6] = 300 end
  if ep == 7 then buf[9] = 1 end
  if ep == 8 then polis.grid_view(buf, L, 1, 1, 0, 1, 0, 0, 1, 0, 3) end
end}
polis.on("reset", function()
  local ep = polis.episode()
  vals[0], vals[1] = 1, 2
  arr[0], arr[1] = nil, {1, -1}
  gain[0], gain[1] = 0, 0
  if ep == 1 then vals[1] = 256 end
  if ep == 2 then vals[0] = "1" end
  if ep == 3 then arr[1] = {1, 1.5} end
  if ep == 4 then arr[0] = 5 end
end)
polis.on("post", function()
  local ep = polis.episode()
  if ep == 5 then gain[1] = nil end
  if ep == 9 then gain[0] = 1 / 0 end
end)
polis.on("end", function() polis.log("end", polis.episode(), polis.tick()) end)
-- expect: polis.observation('both'): give one of 'write' (a function of agent and buffer), 'write_all' (a function of every agent's buffer) and 'values' (a table), got 2
-- expect: polis.observation('none'): give one of 'write' (a function of agent and buffer), 'write_all' (a function of every agent's buffer) and 'values' (a table), got 0
-- expect: polis.observation('bad'): field 'values' must be a table, got number
-- expect: bad argument #2 to 'polis.reward' (function or table expected, got string)
-- expect error: reset: script error: host_table_errors: host_table_errors.lua:18: observation 'v': the table's [1] (agent 1): 256 is outside the u8 range [0, 255] [observation v, tick 0]
-- expect error: host_table_errors.lua:18: observation 'v': the table's [0] (agent 0) is string, expected a number or nil [observation v, tick 0]
-- expect error: host_table_errors.lua:19: observation 'a': the table's [1][2] (agent 1): 1.5 is not an integer (dtype i8) [observation a, tick 0]
-- expect error: host_table_errors.lua:19: observation 'a': the table's [0] (agent 0) is number, expected an array of 2 numbers or nil [observation a, tick 0]
-- expect error: step: script error: host_table_errors: host_table_errors.lua:20: reward 'gain': the table's [1] (agent 1) is nil, expected a number [reward gain, tick 0]
-- expect error: reset: script error: host_table_errors: host_table_errors.lua:23: observation 'w'[6] (agent 1): 300 is outside the u8 range [0, 255] [observation w, tick 0]
-- expect error: host_table_errors.lua:24: observation 'w': index 9 is outside [1, 8] [observation w, tick 0]
-- expect error: host_table_errors.lua:25: polis.grid_view: a 2x2 window from element 3 runs from agent 0's elements of observation 'w' into agent 1's (4 elements each) [observation w, tick 0]
-- expect error: step: script error: host_table_errors: host_table_errors.lua:20: reward 'gain': the table's [0] (agent 0) = inf is not a finite 32-bit float [reward gain, tick 0]
