-- scenario: {"agents": 1, "max_steps": 1}
-- A subscription is resolved when registration freezes; an event type nobody registers
-- fails the create.
polis.subscribe("no.such.event", print)
-- expect error: create: config error: subscribe_unknown: subscribes to event type "no.such.event", which no plugin or script registers
