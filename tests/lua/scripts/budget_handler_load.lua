-- scenario: {"agents": 1, "max_steps": 1, "lua": {"instruction_limit": 100000}}
-- timeout: 60
-- The chunk runs under the budget too: an endless message handler at load time does not
-- hang create (polis validate).
xpcall(function() while true do end end, function() while true do end end)
-- expect error: create: script error: budget_handler_load: budget_handler_load.lua:5: instruction limit of 100000 exceeded
