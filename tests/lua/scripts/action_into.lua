-- scenario: {"agents": 3, "max_steps": 3}
-- dump: illegal
-- actions 1: go stop go
-- actions 2: stop log mark
-- actions 3: mark mark go
-- polis.action{into = t, value = v}: applying the action sets t[agent] = v from the host
-- (value defaults to the action's id), without a handler; a key new to the table is set too
-- (agent 0's at the first step), a masked action sets nothing and is flagged illegal, and
-- the handler form works beside it. A wrong registration is refused.
local chosen = {[1] = -1, [2] = -1} -- agent 0 has no key until its first action
local go = polis.action{name = "go", into = chosen, value = 10}
local stop = polis.action{name = "stop", into = chosen, value = -20}
local mark = polis.action{name = "mark", into = chosen, legal = function(a) return a ~= 1 end}
polis.action{name = "log", handler = function(a) polis.log("handler", a) end}
polis.log("ids", go, stop, mark)
for _, def in ipairs{
  {name = "x1", into = chosen, handler = function() end},
  {name = "x2"},
  {name = "x3", into = 5},
  {name = "x4", handler = function() end, value = 1},
  {name = "x5", into = chosen, value = 1.5},
} do
  local ok, e = pcall(polis.action, def)
  polis.log(ok, e)
end
polis.on("end", function()
  polis.log("t", polis.tick(), chosen[0], chosen[1], chosen[2])
end)
-- expect: ids 1 2 3
-- expect: false polis.action('x1'): give one of 'handler' (a function of the agent) and 'into' (a table the host sets)
-- expect: false polis.action('x2'): give one of 'handler' (a function of the agent) and 'into' (a table the host sets)
-- expect: false polis.action('x3'): field 'into' must be a table, got number
-- expect: false polis.action('x4'): field 'value' goes with 'into'
-- expect: false polis.action('x5'): field 'value' must be an integer
-- expect: t0 illegal: 0 0 0
-- expect: t 0 10 -20 10
-- expect: t1 illegal: 0 0 0
-- expect: handler 1
-- expect: t 1 -20 -20 3
-- expect: t2 illegal: 0 0 0
-- expect: t 2 3 -20 10
-- expect: t3 illegal: 0 1 0
