-- scenario: {"agents": 1, "max_steps": 1}
polis.event("e", {})
polis.publish("e", {})
-- expect error: create: script error: publish_at_load: publish_at_load.lua:3: publish: events can be published only during reset and step
