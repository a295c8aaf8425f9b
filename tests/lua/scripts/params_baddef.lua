-- scenario: {"agents": 1, "max_steps": 1}
-- episodes: 1
-- A broken declaration is the script's own error, named by entry.
local ok, e = pcall(polis.params, {{key = "x", type = "float"}})
polis.log(e)
ok, e = pcall(polis.params, {{key = "x", type = "int", min = 5, max = 1}})
polis.log(e)
ok, e = pcall(polis.params, {{key = "x", type = "int", min = 1, max = 5}})
polis.log(e)
ok, e = pcall(polis.params, {{key = "x", type = "int", default = 9, max = 5}})
polis.log(e)
ok, e = pcall(polis.params, {{key = "x", type = "int", default = 1.5}})
polis.log(e)
ok, e = pcall(polis.params, {{key = "x", type = "int"}, {key = "x", type = "int"}})
polis.log(e)
ok, e = pcall(polis.params, {{type = "int"}})
polis.log(e)
ok, e = pcall(polis.params, {"x"})
polis.log(e)
-- expect: polis.params: entry 1 ('x'): unknown type 'float' (types: int, double, bool, string)
-- expect: polis.params: entry 1 ('x'): min 5 is above max 1
-- expect: polis.params: entry 1 ('x'): give a default (0 is outside [1, 5]) or required = true
-- expect: polis.params: entry 1 ('x'): default 9 is above max 5
-- expect: polis.params: entry 1 ('x'): default must be an integer
-- expect: polis.params: key 'x' is declared twice
-- expect: polis.params: field 'key' must be a string, got nil
-- expect: polis.params: entry 1 must be a table {key=, type=, ...}
