-- guard.lua (test_social_config): a subscriber of a social event tries to change the graph
-- while the event is delivered (refused: status 6, POLIS_ERR_STATE); a hook then does it.
local pending, tried = false, false

polis.subscribe("social.relation_set", function(ev)
  if ev.from == 0 and ev.to == 1 and not tried then
    pending, tried = true, true
    polis.log("in the subscriber: set returned " .. polis.call("social.set", 1, 0, "y", 2))
  end
end)

polis.on("post", function()
  if pending then
    pending = false
    local st = polis.call("social.set", 0, 1, "y", 2)
    polis.log(string.format("in the hook: set returned %d, 0 -> 1 x = %g, y = %g", st,
                            polis.call("social.get", 0, 1, "x"), polis.call("social.get", 0, 1, "y")))
  end
end)
