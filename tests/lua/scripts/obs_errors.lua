-- scenario: {"agents": 2, "max_steps": 1}
-- episodes: 7
-- on-error: reset
-- Values are range-checked, never clamped; indexes are 1-based and bounded; the buffer is
-- only valid inside the writer. Each episode's reset fails one way; the last runs clean.
local kept
polis.observation{name = "o", dtype = "u8", shape = {2, 2}, write = function(agent, buf)
  local e = polis.episode()
  if e == 1 and agent == 1 then buf[4] = 256 end
  if e == 2 then buf[1] = 1.5 end
  if e == 3 then buf[5] = 1 end
  if e == 4 then buf[0] = 1 end
  if e == 5 then buf[1] = "7" end
  if e == 6 then kept = buf end
  buf[1] = agent
end}
polis.on("end", function()
  if kept then
    local k = kept
    kept = nil
    return k[1]
  end
  polis.log("end", polis.episode(), polis.tick())
end)
-- expect error: reset: script error: obs_errors: obs_errors.lua:9: observation 'o'[4] (agent 1): 256 is outside the u8 range [0, 255] [observation o, tick 0]
-- expect error: obs_errors.lua:10: observation 'o'[1] (agent 0): 1.5 is not an integer (dtype u8)
-- expect error: obs_errors.lua:11: observation 'o': index 5 is outside [1, 4]
-- expect error: obs_errors.lua:12: observation 'o': index 0 is outside [1, 4]
-- expect error: obs_errors.lua:13: observation 'o'[1] (agent 0): value must be a number, got string
-- expect error: step: script error: obs_errors: obs_errors.lua:21: the observation buffer is only valid while its writer runs (do not keep it) [hook end, tick 0]
-- expect: end 7 0
