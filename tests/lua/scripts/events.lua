-- scenario: {"agents": 2, "max_steps": 1}
-- Event types, publish and subscribe. Subscribers run by priority, then registration order;
-- an event published while another is being delivered is queued and delivered after the
-- current one reached every subscriber. A subscriber gets one table per event type, reused
-- for every event of that type, with the fields plus type, tick and seq.
local ping = polis.event("test.ping", {{"agent", "i32"}, {"big", "i64"}, {"w", "f64"},
                                       {"f", "f32"}})
local pong = polis.event("test.pong", {{name = "n", type = "i32"}})
polis.log("ids", ping, pong, polis.event_id("test.pong"), polis.event_id("nope"))
local first
polis.subscribe("test.ping", function(ev)
  polis.log("A", ev.type, ev.tick, ev.agent, ev.big, ev.w, ev.f, math.type(ev.seq))
  polis.publish("test.pong", {n = ev.agent})
  polis.log("A published pong", ev.agent)
  if first == nil then first = ev else polis.log("same table", first == ev) end
end)
polis.subscribe("test.ping", function(ev) polis.log("B priority -1", ev.agent) end, -1)
polis.subscribe("test.ping", function(ev) polis.log("C", ev.agent) end)
polis.subscribe("test.pong", function(ev) polis.log("pong", ev.n, ev.type) end)
polis.on("post", function()
  polis.publish("test.ping", {agent = 0, big = 5000000000, w = 0.25, f = 1.5})
  polis.publish(ping, {agent = 1, big = -1, w = -2.5, f = 0})
  polis.log("post done")
end)
-- expect: ids 0 1 1 nil
-- expect: B priority -1 0
-- expect: A test.ping 0 0 5000000000 0.25 1.5 integer
-- expect: A published pong 0
-- expect: C 0
-- expect: pong 0 test.pong
-- expect: B priority -1 1
-- expect: A test.ping 0 1 -1 -2.5 0.0 integer
-- expect: A published pong 1
-- expect: same table true
-- expect: C 1
-- expect: pong 1 test.pong
-- expect: post done
