-- scenario: {"agents": 1, "max_steps": 1, "scripts": [{"path": "params_type.lua", "params": {"fast": 1}}]}
polis.params{{key = "fast", type = "bool", default = false}}
-- expect error: create: config error: params_type: params_type.lua:2: <string>: scripts[0].params.fast: expected true or false, got 1
