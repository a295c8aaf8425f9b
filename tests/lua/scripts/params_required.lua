-- scenario: {"agents": 1, "max_steps": 1}
polis.params{{key = "name", type = "string", required = true}}
-- expect error: create: config error: params_required: params_required.lua:2: <string>: scripts[0].params: missing required key "name"
