-- scenario: {"agents": 1, "max_steps": 1}
polis.log("runs until the error")
local t = nil
local x = t.field
-- expect: runs until the error
-- expect error: create: script error: load_error: load_error.lua:4: attempt to index a nil value (local 't')
