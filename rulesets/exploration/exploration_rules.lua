-- exploration_rules.lua: one reward function and one post-step hook in Lua on top of the
-- C society ruleset — the Lua side of docs/performance.md's "C vs Lua" comparison.
-- The post hook reads every agent's cell through society's exports (polis.call, libffi)
-- and counts the steps it stood still; the reward pays `bonus` to an agent that moved.
local p = polis.params{
  {key = "bonus", type = "double", default = 0.01, min = -1, max = 1,
   doc = "reward for an agent that changed cells this step"},
}

local last = {}
local moved = {}
local still = {}

polis.on("reset", function()
  last, moved, still = {}, {}, {}
end)

local width = nil

polis.on("post", function()
  if not width then width = polis.grid_size() end
  for agent = 0, polis.n_agents() - 1 do
    local cell = polis.call("society.agent_y", agent) * width + polis.call("society.agent_x", agent)
    moved[agent] = last[agent] ~= nil and last[agent] ~= cell
    if not moved[agent] then still[agent] = (still[agent] or 0) + 1 end
    last[agent] = cell
  end
end)

polis.reward("moved", function(agent)
  if moved[agent] then return p.bonus end
  return 0
end)
