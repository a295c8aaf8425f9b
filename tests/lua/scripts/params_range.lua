-- scenario: {"agents": 1, "max_steps": 1, "scripts": [{"path": "params_range.lua", "params": {"speed": 12}}]}
polis.params{{key = "speed", type = "int", default = 1, min = 0, max = 10}}
-- expect error: create: config error: params_range: params_range.lua:2: <string>: scripts[0].params.speed: expected integer in [0, 10], got 12
