-- scenario: {"agents": 1, "max_steps": 1}
-- Registration is open while the script loads: in its chunk and in polis.on_start functions
-- (which run after every plugin and script loaded). It is closed once the env runs.
polis.on_start(function()
  polis.log("start 1")
  polis.on("post", function() polis.log("hook from on_start") end)
  polis.on_start(function() polis.log("start 2, added by start 1") end)
end)
polis.on("post", function()
  for _, f in ipairs{
    function() polis.on("post", print) end,
    function() polis.on_start(print) end,
    function() polis.action{name = "late", handler = print} end,
    function() polis.reward("late", print) end,
    function() polis.event("late", {}) end,
    function() polis.subscribe("late", print) end,
    function() polis.observation{name = "late", dtype = "u8", shape = {1}, write = print} end,
    function() polis.params{} end,
    function() polis.grid_layer("late") end,
  } do
    local ok, e = pcall(f)
    polis.log((e:gsub("^registration.lua:%d+: ", "")))
  end
end)
polis.log(pcall(polis.on, "later", print))
-- expect: false bad argument #1 to 'polis.on' (unknown phase 'later' (phases: reset, begin, resolve, world, post, end, observe))
-- expect: start 1
-- expect: start 2, added by start 1
-- expect: polis.on: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect: polis.on_start: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect: polis.action: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect: polis.reward: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect: polis.event: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect: polis.subscribe: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect: polis.observation: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect: polis.params: parameters can only be read while the script loads
-- expect: polis.grid_layer: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect: hook from on_start
