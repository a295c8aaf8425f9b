-- Policies written in Lua (tests/unit/test_policy.c): by id, by name, drawing from the
-- policy generator, and the ways a policy can go wrong.
local jump = polis.action{name = "jump", handler = function(agent) end}

-- The env's rewards come from the env generator: a policy that drew from it would change them.
polis.reward("luck", function(agent) return math.random(100) end)

polis.policy("lua_dice", function(agent) return math.random(0, jump) end)
polis.policy("by_name", function(agent) return "jump" end)
polis.policy("unknown", function(agent) return "fly" end)
polis.policy("wrong", function(agent) return {} end)
polis.policy("raises", function(agent) error("no policy for agent " .. agent) end)
polis.policy("range", function(agent) return 42 end)
