-- scenario: {"agents": 3, "max_steps": 6, "visibility": [{"observers": [0], "hidden": ["agent_2"], "from": 2, "until": 4}]}
-- Who sees whom (docs/visibility.md) from a script: the scenario's rule hides agent 2 from
-- agent 0 from tick 2 until tick 4; an agent always sees itself; polis.set_visible makes a
-- setting that wins over the rules (false hides, true shows, nil gives the pair back to them);
-- visibility_active() is false when nothing can be hidden now (after a hiding setting, true).
local function show()
  polis.log("t" .. polis.tick(), polis.visibility_active(), polis.visible(0, 2),
            polis.visible(2, 0), polis.visible(1, 2), polis.visible(2, 2))
end
polis.on("observe", function()
  show()
  if polis.tick() == 3 then polis.set_visible(0, 2, true) end
  if polis.tick() == 4 then polis.set_visible(-1, 1, false) end
  if polis.tick() == 5 then
    polis.log("t5 hides 1 from all", polis.visible(0, 1), polis.visible(2, 1), polis.visible(1, 1))
    polis.set_visible(0, 2, nil)
    polis.set_visible(-1, -1, nil)
    polis.log("back to the rules", polis.visible(0, 2), polis.visible(0, 1))
    local ok, err = pcall(polis.set_visible, 3, 0, false)
    polis.log(ok, err)
    ok, err = pcall(polis.set_visible, 0, 0, 7)
    polis.log(ok, err)
  end
end)
-- expect: t0 false true true true true
-- expect: t1 false true true true true
-- expect: t2 true false true true true
-- expect: t3 true false true true true
-- expect: t4 false true true true true
-- expect: t5 true true true true true
-- expect: t5 hides 1 from all false false true
-- expect: back to the rules true true
-- expect: false bad argument #1 to 'polis.set_visible' (observer 3 is not in [-1, 2])
-- expect: false bad argument #3 to 'polis.set_visible' (expected true (shown), false (hidden) or nil (the rules))
-- expect: t6 true true true true true
