-- scenario: {"agents": 2, "max_steps": 2}
-- Hooks of every phase run in step order; inside a phase by priority (lower first), equal
-- priorities in registration order. on_start runs once, at create.
local phases = {"reset", "begin", "resolve", "world", "post", "end", "observe"}
polis.on_start(function() polis.log("start", polis.n_agents(), polis.max_steps()) end)
for _, p in ipairs(phases) do
  polis.on(p, function() polis.log(p, "t" .. polis.tick(), "e" .. polis.episode()) end)
end
polis.on("post", function() polis.log("post late") end, 5)
polis.on("post", function() polis.log("post early") end, -5)
polis.on("post", function() polis.log("post same priority, registered later") end)

-- expect: start 2 2
-- expect: reset t0 e1
-- expect: observe t0 e1
-- expect: begin t0 e1
-- expect: resolve t0 e1
-- expect: world t0 e1
-- expect: post early
-- expect: post t0 e1
-- expect: post same priority, registered later
-- expect: post late
-- expect: end t0 e1
-- expect: observe t1 e1
-- expect: begin t1 e1
-- expect: resolve t1 e1
-- expect: world t1 e1
-- expect: post early
-- expect: post t1 e1
-- expect: post same priority, registered later
-- expect: post late
-- expect: end t1 e1
-- expect: observe t2 e1
