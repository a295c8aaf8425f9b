-- scenario: {"agents": 1, "max_steps": 1}
-- episodes: 7
-- on-error: reset
-- Each episode publishes one bad event; the error names the event and the field. A failing
-- subscriber's message keeps the place of the failure (the event), not the publisher's.
polis.event("test.ping", {{"agent", "i32"}, {"w", "f64"}, {"f", "f32"}})
polis.subscribe("test.ping", function(ev)
  if polis.episode() == 6 then error("subscriber says no") end
end)
local bad = {
  {agent = 0, f = 1},
  {agent = 0, w = 1, f = 1, agnet = 2},
  {agent = 2 ^ 40 // 1, w = 1, f = 1},
  {agent = 1.5, w = 1, f = 1},
  {agent = 0, w = 1, f = 1e300},
  {agent = 0, w = 1, f = 1},
}
polis.on("post", function()
  local e = polis.episode()
  if e <= #bad then polis.publish("test.ping", bad[e]) end
  if e == 7 then polis.publish("nope", {}) end
end)
-- expect error: event_errors.lua:20: polis.publish('test.ping'): missing field 'w' [hook post, tick 0]
-- expect error: event_errors.lua:20: polis.publish('test.ping'): 'agnet' is not a field of the event
-- expect error: event_errors.lua:20: polis.publish('test.ping'): field 'agent' = 1099511627776 does not fit in i32
-- expect error: event_errors.lua:20: polis.publish('test.ping'): field 'agent' must be an integer, got 1.5
-- expect error: event_errors.lua:20: polis.publish('test.ping'): field 'f' = 1e+300 does not fit in f32
-- expect error: step: script error: event_errors: event_errors.lua:8: subscriber says no [event test.ping, tick 0]
-- expect error: event_errors.lua:21: bad argument #1 to 'publish' (unknown event type 'nope') [hook post, tick 0]
