-- scenario: {"agents": 2, "max_steps": 3, "lua": {"time_limit_ms": 1000}}
-- episodes: 7
-- on-error: reset
-- timeout: 120
-- max-ms: 10000
-- Without the instruction budget (the default) the time limit is kept by a watchdog thread
-- that touches a callback only once it has overrun. An endless loop fails the step with
-- script:line, the hook (or the writer and agent) and the tick, a fraction of a second after
-- the limit: on top, under pcall, in a coroutine (wrap and create), 20,000 frames down and
-- in an observation writer. Then the env works again.
local function deep(n, f)
  if n == 0 then return f() end
  return deep(n - 1, f) + 0 -- not a tail call: every frame stays on the stack
end
polis.on("post", function()
  local e = polis.episode()
  polis.log("post", e, polis.tick())
  if polis.tick() ~= 1 then return end
  if e == 1 then
    while true do end
  elseif e == 2 then
    while true do pcall(function() while true do end end) end
  elseif e == 3 then
    local co = coroutine.wrap(function() while true do end end)
    co()
  elseif e == 4 then
    local co = coroutine.create(function() while true do end end)
    polis.log("resumed", coroutine.resume(co))
  elseif e == 5 then
    deep(20000, function() while true do end end)
  end
end)
polis.observation{name = "o", dtype = "f32", shape = {1}, write = function(a, buf)
  if polis.episode() == 6 and polis.tick() == 2 and a == 1 then while true do end end
  buf[1] = a
end}
-- expect: post 1 0
-- expect: post 1 1
-- expect error: step: script error: time_watchdog: time_watchdog.lua:20: time limit of 1000 ms exceeded [hook post, tick 1]
-- expect: post 2 0
-- expect: post 2 1
-- expect error: step: script error: time_watchdog: time_watchdog.lua:22: time limit of 1000 ms exceeded [hook post, tick 1]
-- expect: post 3 0
-- expect: post 3 1
-- expect error: step: script error: time_watchdog: time_watchdog.lua:24: time limit of 1000 ms exceeded [hook post, tick 1]
-- expect: post 4 0
-- expect: post 4 1
-- expect error: step: script error: time_watchdog: time_watchdog.lua:28: time limit of 1000 ms exceeded [hook post, tick 1]
-- expect: post 5 0
-- expect: post 5 1
-- expect error: step: script error: time_watchdog: time_watchdog.lua:30: time limit of 1000 ms exceeded [hook post, tick 1]
-- expect: post 6 0
-- expect: post 6 1
-- expect error: step: script error: time_watchdog: time_watchdog.lua:34: time limit of 1000 ms exceeded [observation o, tick 2]
-- expect: post 7 0
-- expect: post 7 1
-- expect: post 7 2
