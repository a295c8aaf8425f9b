-- scenario: {"agents": 1, "max_steps": 1, "scripts": [{"path": "params.lua", "params": {"speed": 3, "name": "bob"}}]}
-- polis.params validates the script's "params" object against the declared table (like a
-- plugin's parameter table) and returns the values: given ones, else the defaults.
local p = polis.params{
  {key = "speed", type = "int", default = 1, min = 0, max = 10, doc = "cells per step"},
  {key = "rate", type = "double", default = 0.25, min = 0, max = 1},
  {key = "fast", type = "bool", default = true},
  {key = "name", type = "string", required = true},
  {key = "title", type = "string"},
  {key = "count", type = "int"},
}
polis.log(p.speed, math.type(p.speed), p.rate, p.fast, p.name, p.title, p.count)
-- expect: 3 integer 0.25 true bob nil 0
