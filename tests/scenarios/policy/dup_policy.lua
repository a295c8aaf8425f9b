-- Registers a policy name lua_policy.lua already took (tests/unit/test_policy.c).
polis.policy("lua_dice", function(agent) return 0 end)
