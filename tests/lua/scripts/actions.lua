-- scenario: {"agents": 2, "max_steps": 3}
-- dump: masks illegal
-- actions 1: dig dig
-- actions 2: dig jump
-- actions 3: jump jump
-- Actions join the flat action space after the kernel's noop (id 0). `legal` builds the
-- masks; a masked action is a no-op flagged in io->illegal and its handler does not run; a
-- handler returning false marks the action illegal at resolution.
local dug = {}
local dig = polis.action{
  name = "dig",
  doc = "dig once per episode",
  handler = function(agent)
    dug[agent] = (dug[agent] or 0) + 1
    polis.log("dig", agent, dug[agent])
  end,
  legal = function(agent) return (dug[agent] or 0) == 0 end,
}
local jump = polis.action{
  name = "jump",
  handler = function(agent)
    polis.log("jump", agent, "tick", polis.tick())
    return agent == 0
  end,
}
polis.log("ids", dig, jump, polis.action_id("dig"), polis.action_id("noop"),
          polis.action_id("fly"))
-- expect: ids 1 2 1 0 nil
-- expect: t0 masks a0: 1 1 1
-- expect: t0 masks a1: 1 1 1
-- expect: t0 illegal: 0 0
-- expect: dig 0 1
-- expect: dig 1 1
-- expect: t1 masks a0: 1 0 1
-- expect: t1 masks a1: 1 0 1
-- expect: t1 illegal: 0 0
-- expect: jump 1 tick 1
-- expect: t2 masks a0: 1 0 1
-- expect: t2 masks a1: 1 0 1
-- expect: t2 illegal: 1 1
-- expect: jump 0 tick 2
-- expect: jump 1 tick 2
-- expect: t3 masks a0: 1 0 0
-- expect: t3 masks a1: 1 0 0
-- expect: t3 illegal: 0 1
