-- scenario: {"agents": 1, "max_steps": 1, "scripts": ["two_scripts.lua", {"path": "helpers/other.lua", "name": "other", "params": {"greeting": "hi"}}]}
-- Two scripts in one env: separate Lua states (globals do not leak), each its own plugin
-- name in log lines, talking through the bus.
shared = "main"
polis.event("chat.msg", {{"from", "i32"}})
polis.subscribe("chat.reply", function(ev) polis.log("reply", ev.n) end)
polis.on("post", function() polis.publish("chat.msg", {from = 7}) end)
-- expect: [other] hi nil
-- expect: [other] got 7
-- expect: reply 8
