-- scenario: {"agents": 1, "max_steps": 1}
-- episodes: 2
-- on-error: reset
-- polis.log keeps what follows an embedded NUL (written \0); an error in nested coroutines
-- carries the one place where it happened, however deep.
polis.log("a\0b", "\0")
local function nest(depth)
  if depth == 0 then error("deep down") end
  return coroutine.wrap(function() return nest(depth - 1) end)()
end
polis.on("world", function()
  if polis.episode() == 1 then nest(30) end
  polis.log("after", polis.episode())
end)
-- expect: a\0b \0
-- expect error: step: script error: log_and_nesting: log_and_nesting.lua:8: deep down [hook world, tick 0]
-- expect: after 2
