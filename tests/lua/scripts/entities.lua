-- scenario: {"agents": 2, "max_steps": 1}
-- Entity ids are integers; an id goes stale when its entity is destroyed.
polis.on("reset", function()
  local e0, e1 = polis.agent_entity(0), polis.agent_entity(1)
  polis.log("agents", polis.entity_alive(e0), polis.entity_alive(e1), e0 ~= e1,
            math.type(e0))
  local e = polis.entity_create()
  polis.log("created", polis.entity_alive(e))
  polis.entity_destroy(e)
  polis.log("destroyed", polis.entity_alive(e))
  local ok, err = pcall(polis.entity_destroy, e)
  polis.log("destroy twice", ok, (err:gsub("%d+", "N")))
  polis.log("zero", polis.entity_alive(0))
  ok, err = pcall(polis.agent_entity, 2)
  polis.log(ok, err)
end)
-- expect: agents true true true integer
-- expect: created true
-- expect: destroyed false
-- expect: destroy twice false entity_destroy: entity N (generation N) is not alive
-- expect: zero false
-- expect: false bad argument #1 to 'polis.agent_entity' (agent 2 is not in [0, 1])
