-- scenario: {"agents": 1, "max_steps": 1, "lua": {"memory_limit": 1000000}, "scripts": ["memory_shared.lua", {"path": "helpers/hog.lua", "name": "hog"}]}
-- The memory cap covers all the env's scripts together: this one keeps 350 kB (and
-- string.rep briefly needs twice that), so the next script cannot take as much.
big = string.rep("x", 350000)
polis.log("kept", #big)
-- expect: kept 350000
-- expect error: create: script error: hog: helpers/hog.lua:2: memory limit of 1000000 bytes exceeded
