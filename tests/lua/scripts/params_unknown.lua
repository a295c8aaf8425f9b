-- scenario: {"agents": 1, "max_steps": 1, "scripts": [{"path": "params_unknown.lua", "params": {"sped": 2}}]}
polis.params{{key = "speed", type = "int", default = 1}}
-- expect error: create: config error: params_unknown: params_unknown.lua:2: <string>: scripts[0].params.sped: unknown key (expected one of speed)
