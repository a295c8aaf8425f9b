-- scenario: {"agents": 1, "max_steps": 2, "lua": {"instruction_limit": 100000}}
-- episodes: 5
-- on-error: reset
-- timeout: 60
-- No script outlives its budget, message handlers included: a handler that never returns
-- is not run once the limit is hit (the count hook raises the error with hooks off), a
-- handler of an ordinary error runs under the budget, and neither pcall inside the handler
-- nor a to-be-closed variable's __close gets more: the caught error meets the budget again
-- at the next instruction. After a reset the state works.
local function spin() while true do end end
polis.on("post", function()
  local e = polis.episode()
  polis.log("post", e, polis.tick())
  polis.log("handlers that return still run", xpcall(error, function(m) return "handled " .. m end, "x", 0))
  if polis.tick() ~= 1 then return end
  if e == 1 then
    xpcall(spin, spin)
  elseif e == 2 then
    xpcall(error, function() while true do end end, "first")
  elseif e == 3 then
    xpcall(spin, function() while true do pcall(spin) end end)
  elseif e == 4 then
    local t <close> = setmetatable({}, {__close = function() while true do end end})
    spin()
  end
end)
-- expect: post 1 0
-- expect: handlers that return still run false handled x
-- expect: post 1 1
-- expect: handlers that return still run false handled x
-- expect error: step: script error: budget_handlers: budget_handlers.lua:17: instruction limit of 100000 exceeded [hook post, tick 1]
-- expect: post 2 0
-- expect: handlers that return still run false handled x
-- expect: post 2 1
-- expect: handlers that return still run false handled x
-- expect error: step: script error: budget_handlers: budget_handlers.lua:19: instruction limit of 100000 exceeded [hook post, tick 1]
-- expect: post 3 0
-- expect: handlers that return still run false handled x
-- expect: post 3 1
-- expect: handlers that return still run false handled x
-- expect error: step: script error: budget_handlers: budget_handlers.lua:21: instruction limit of 100000 exceeded [hook post, tick 1]
-- expect: post 4 0
-- expect: handlers that return still run false handled x
-- expect: post 4 1
-- expect: handlers that return still run false handled x
-- expect error: step: script error: budget_handlers: budget_handlers.lua:23: instruction limit of 100000 exceeded [hook post, tick 1]
-- expect: post 5 0
-- expect: handlers that return still run false handled x
-- expect: post 5 1
-- expect: handlers that return still run false handled x
