-- scenario: {"agents": 2, "max_steps": 2}
-- episodes: 5
-- on-error: reset
-- Each episode breaks the reward rules one way; the last one runs clean.
local kept
polis.reward("r", function(agent)
  if polis.episode() == 1 and agent == 1 then return nil end
  return 1
end)
polis.reward_transform("t", function(r)
  local e = polis.episode()
  if e == 2 then r[2] = 1 end
  if e == 3 then kept = r end
  if e == 4 then r[0] = math.huge end
end)
polis.on("end", function()
  if kept then
    local k = kept
    kept = nil
    polis.log("kept", k[0])
  end
  polis.log("end", polis.episode(), polis.tick())
end)
-- expect error: step: script error: reward_errors: reward_errors.lua:6: reward 'r' for agent 1 (the function defined here) returned nil, expected a number [reward r, tick 0]
-- expect error: step: script error: reward_errors: reward_errors.lua:12: reward transform 't': index must be an agent id in [0, 1], got 2 [reward transform t, tick 0]
-- expect error: step: script error: reward_errors: reward_errors.lua:20: the rewards view is only valid while its transform runs (do not keep it) [hook end, tick 0]
-- expect error: reward_errors.lua:14: reward transform 't': rewards[0] = inf is not a finite 32-bit float
-- expect: end 5 0
-- expect: end 5 1
