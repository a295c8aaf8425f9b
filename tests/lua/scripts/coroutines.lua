-- scenario: {"agents": 1, "max_steps": 3}
-- Coroutines work inside callbacks and across them; a coroutine may publish, and the
-- script's own subscriber then runs (nested) while the coroutine is suspended in C.
polis.event("co.ev", {{"n", "i32"}})
polis.subscribe("co.ev", function(ev) polis.log("got", ev.n, polis.tick()) end)
local gen = coroutine.wrap(function()
  local i = 0
  while true do
    i = i + 1
    polis.publish("co.ev", {n = i})
    coroutine.yield(i * 10)
  end
end)
polis.on("post", function() polis.log("yielded", gen()) end)
-- expect: got 1 0
-- expect: yielded 10
-- expect: got 2 1
-- expect: yielded 20
-- expect: got 3 2
-- expect: yielded 30
