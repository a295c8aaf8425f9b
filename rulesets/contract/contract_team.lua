-- Contract with a team reward (rulesets/contract/contract_team.json): replaces the social
-- plugin's group split ("social.split") by the scenario's "replace" list, without touching
-- any plugin. Every agent receives the mean reward of all agents, whatever its group.

function team_mean(r)
  local sum = 0
  for a = 0, #r - 1 do sum = sum + r[a] end
  for a = 0, #r - 1 do r[a] = sum / #r end
end
