-- scenario: {"agents": 1, "max_steps": 1, "scripts": [{"path": "params_undeclared.lua", "params": {"speed": 2}}]}
-- A script that declares no parameters must not be given any.
polis.log("loaded")
-- expect: loaded
-- expect error: create: config error: <string>: scripts[0].params.speed: unknown key (this takes no parameters)
