-- scenario: {"agents": 2, "max_steps": 2}
-- episodes: 3
-- on-error: reset
-- actions 1: poke poke
-- A handler must return nothing, true or false; a legality function true or false. The
-- error names the function's definition, the action, the agent and the tick.
polis.action{
  name = "poke",
  handler = function(agent)
    if polis.episode() == 1 then return 5 end
  end,
  legal = function(agent)
    if polis.episode() == 2 then return nil end
    return true
  end,
}
polis.on("end", function() polis.log("end", polis.episode(), polis.tick()) end)
-- expect error: step: script error: action_errors: action_errors.lua:9: the handler of action 'poke' (the function defined here) returned number, expected nothing, true or false [action poke, agent 0 (agent_0), tick 0]
-- expect error: reset: script error: action_errors: action_errors.lua:12: the legality function of action 'poke' (the function defined here) returned nil, expected true or false
-- expect: end 3 0
-- expect: end 3 1
