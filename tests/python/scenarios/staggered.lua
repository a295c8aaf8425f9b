-- staggered.lua: agents leave the episode at different ticks, so the Python SDK's tests see
-- `agents` shrink one agent at a time and tell termination from truncation.
--   agent 1 is terminated in the step computed at tick `terminate_at` and paid `final` then;
--   agent 2 is truncated by this script in the step computed at tick `truncate_at`;
--   the others run until the kernel truncates them at max_steps.
local p = polis.params{
  {key = "terminate_at", type = "int", default = 2, min = 0, max = 1000000,
   doc = "tick of the step that terminates agent 1"},
  {key = "truncate_at", type = "int", default = 4, min = 0, max = 1000000,
   doc = "tick of the step that truncates agent 2"},
  {key = "final", type = "double", default = 5, min = -100, max = 100,
   doc = "reward agent 1 receives in the step it is terminated"},
}

polis.on("end", function()
  local t = polis.tick()
  if t == p.terminate_at then polis.terminate(1) end
  if t == p.truncate_at then polis.truncate(2) end
end)

polis.reward("final", function(agent)
  if agent == 1 and polis.tick() == p.terminate_at then return p.final end
  return 0
end)
