-- scenario: {"agents": 2, "max_steps": 1, "grid": {"width": 1024, "height": 1024}, "lua": {"memory_limit": 8388608}}
-- Engine memory a script asks for (observation fields: shape x dtype x agents; new grid
-- layers: width x height cells) counts against lua.memory_limit together with the scripts'
-- Lua memory, and a request beyond it is refused at its line, before anything is allocated.
polis.observation{name = "small", shape = {16, 16}, dtype = "f32", write = function() end}
polis.log("first layer", polis.grid_layer("a"), "again", polis.grid_layer("a"))
local ok, err = pcall(polis.grid_layer, "b")
polis.log("second layer", ok, err:match("^(.-needs %d+ bytes of engine memory)"))
polis.observation{name = "big", shape = {16384, 16384}, dtype = "u8", write = function() end}
polis.log("never reached")
-- expect: first layer 0 again 0
-- expect: second layer false polis.grid_layer('b') needs 4194304 bytes of engine memory
-- expect error: create: script error: engine_memory: engine_memory.lua:9: polis.observation('big') needs 536870912 bytes of engine memory; with the
