-- scenario: {"agents": 1, "max_steps": 1}
polis.log("never runs")
local x = = 1
-- expect error: create: script error: syntax_error: syntax_error.lua:3: unexpected symbol near '='
