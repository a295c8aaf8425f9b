-- A rule with a parameter, a reward, a hook, an event, a view and a text action.
local p = polis.params{bonus = {type = "number", default = 1}}
local seen = {}
local ev = polis.event("fuzz.tick", {agent = "i32"})
polis.subscribe("fuzz.tick", function(e) seen[e.agent] = (seen[e.agent] or 0) + 1 end)
polis.on("post", function()
  for a = 0, polis.n_agents() - 1 do polis.publish(ev, {agent = a}) end
end)
polis.reward("fuzz_bonus", function(a) return (seen[a] or 0) * p.bonus end)
polis.renderer("text", function(a) return "seen " .. (seen[a] or 0) end)
polis.action_parser(function(a, input)
  if input == "rest" then return polis.action_id("noop") end
end)
local board = {}
polis.shared_observation{name = "fuzz_board", dtype = "i16", shape = {2}, values = board}
polis.shared_observation{name = "fuzz_clock", dtype = "f32", shape = {1},
  write = function(buf) buf[1] = polis.tick(); board[1] = #seen end}
