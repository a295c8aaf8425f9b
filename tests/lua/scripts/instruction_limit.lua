-- scenario: {"agents": 1, "max_steps": 3, "lua": {"instruction_limit": 100000}}
-- episodes: 4
-- on-error: reset
-- An endless loop is stopped by the per-callback instruction budget with script:line, the
-- hook and the tick; catching the error with pcall or running the loop in a coroutine does
-- not escape it (the error keeps the one place where it happened). After a reset the
-- state is usable again.
polis.on("post", function()
  polis.log("post", polis.episode(), polis.tick())
  local e = polis.episode()
  if polis.tick() ~= 1 then return end
  if e == 1 then
    while true do end
  elseif e == 2 then
    while true do pcall(function() while true do end end) end
  elseif e == 3 then
    local co = coroutine.wrap(function() while true do end end)
    co()
  end
end)
-- expect: post 1 0
-- expect: post 1 1
-- expect error: step: script error: instruction_limit: instruction_limit.lua:13: instruction limit of 100000 exceeded [hook post, tick 1]
-- expect: post 2 0
-- expect: post 2 1
-- expect error: step: script error: instruction_limit: instruction_limit.lua:15: instruction limit of 100000 exceeded [hook post, tick 1]
-- expect: post 3 0
-- expect: post 3 1
-- expect error: step: script error: instruction_limit: instruction_limit.lua:17: instruction limit of 100000 exceeded [hook post, tick 1]
-- expect: post 4 0
-- expect: post 4 1
-- expect: post 4 2
