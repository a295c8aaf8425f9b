-- scenario: {"agents": 1, "max_steps": 1, "scripts": [{"path": "params_twice.lua", "params": {"n": 4}}]}
-- A script has one parameter table: a call that failed declared nothing and may be retried;
-- after a call that returned, another is refused (in the chunk and in polis.on_start), and
-- the first call's values stand.
local ok, e = pcall(polis.params, {{key = "n", type = "float"}})
polis.log(ok, e)
-- expect: false polis.params: entry 1 ('n'): unknown type 'float' (types: int, double, bool, string)
local p = polis.params{{key = "n", type = "int", default = 1, doc = "a count"}}
polis.log(p.n)
-- expect: 4
ok, e = pcall(polis.params, {{key = "m", type = "int"}})
polis.log(ok, e)
-- expect: false polis.params: the parameters are already declared (call it once, with every parameter)
polis.on_start(function()
  local ok2, e2 = pcall(polis.params, {{key = "n", type = "int"}})
  polis.log(ok2, e2, p.n)
end)
-- expect: false polis.params: the parameters are already declared (call it once, with every parameter) 4
