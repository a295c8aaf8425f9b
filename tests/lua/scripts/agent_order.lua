-- scenario: {"agents": 3, "max_steps": 2}
-- actions 1: act act act
-- actions 2: act act act
-- set_agent_order picks the acting agents and their order, in the BEGIN phase only.
polis.action{name = "act", handler = function(a) polis.log("act", a) end}
polis.on("begin", function()
  if polis.tick() == 0 then
    polis.set_agent_order({2, 0})
    polis.log(pcall(polis.set_agent_order, {1, 1}))
    polis.log(pcall(polis.set_agent_order, {3}))
    polis.set_agent_order({2, 0})
  end
end)
polis.on("post", function()
  polis.log(pcall(polis.set_agent_order, {0}))
end)
-- expect: false set_agent_order: agent 1 appears twice
-- expect: false polis.set_agent_order: element 1 is not an agent id (0..2)
-- expect: act 2
-- expect: act 0
-- expect: false set_agent_order is only allowed in the begin phase
-- expect: act 0
-- expect: act 1
-- expect: act 2
-- expect: false set_agent_order is only allowed in the begin phase
