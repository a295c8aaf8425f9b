-- social_demo.lua: the economy of the social demo. An agent that works earns 1 this step;
-- the social plugin's split_score_to_group then shares it inside its groups by
-- division_weight. The script also shows Lua reading the graph through social's exports.
local worked = {}

polis.on("begin", function()
  worked = {}
end)

polis.action{
  name = "work",
  doc = "earn 1 this step (shared with your groups)",
  handler = function(agent)
    worked[agent] = true
  end,
}

polis.reward("work", function(agent)
  if worked[agent] then return 1 end
  return 0
end)

-- Lua reads the graph through social's exports: report when ada's (agent 0) weight in
-- group 0 (node 4 = 4 agents + group 0) changes. The revision changes with every edit of the
-- graph, so it is a cheap test for "anything changed".
local last_rev, last_w = -1, nil
polis.on("end", function()
  local rev = polis.call("social.revision")
  if rev == last_rev then return end
  last_rev = rev
  local w = polis.call("social.get", 4, 0, "division_weight")
  if w ~= w then w = nil end -- NaN: ada is not in group 0
  if w ~= last_w then
    polis.log(string.format("tick %d: ada %s", polis.tick(),
                            w and string.format("weighs %g in group 0", w) or "left group 0"))
    last_w = w
  end
end)
