-- Reads metrics through the plugin's export at every END (tests/test_metrics.c).
local function fmt(v)
  if v ~= v then return "nan" end
  return string.format("%.5g", v)
end

polis.on("end", function()
  local m = function(key) return fmt(polis.call("metrics.value", key)) end
  polis.log(string.format("fairness=%s total=%s oracle=%s split=%s hammer=%s bogus=%s",
    m("fairness"), m("reward.total"), m("oracle"), m("split_ratio"),
    m("completion.hammer_craft"), m("no.such.key")))
  polis.log(string.format("total_normalised=%s mean_normalised=%s old_total=%s old_mean=%s",
    m("total_reward_normalised"), m("mean_reward_normalised"), m("total_normalised"),
    m("reward_normalised")))
  polis.log(string.format("picked=%s", m("events.resource.picked")))
end)
