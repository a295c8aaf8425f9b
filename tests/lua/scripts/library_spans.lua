-- scenario: {"agents": 1, "max_steps": 1, "lua": {"instruction_limit": 100000, "time_limit_ms": 0}}
-- episodes: 5
-- on-error: reset
-- string.byte, utf8.codepoint and utf8.len charge the bytes of s[i..j] they read, with the
-- span clamped the way Lua clamps it: j defaults to i (string.byte, utf8.codepoint) or to
-- the end (utf8.len), negative positions count from the end. A whole 200,000-byte string is
-- over the budget in one call; one byte, or the last two, a thousand times over is not.
local big = string.rep("a", 200000)
polis.on("world", function()
  local e = polis.episode()
  if e == 1 then string.byte(big, 1, -1) end
  if e == 2 then utf8.codepoint(big, 1, -1) end
  if e == 3 then for _ = 1, 40 do utf8.len(big) end end
  if e == 4 then string.byte(big, -200000, 200001) end
  local n = 0
  for _ = 1, 1000 do
    n = n + string.byte(big, 7) + string.byte(big, -2, -1) + utf8.codepoint(big, 3)
      + utf8.codepoint(big, -2, -1) + utf8.len(big, -10) + utf8.len(big, 5, 4)
  end
  polis.log("usable", e, n)
end)
-- expect error: step: script error: library_spans: library_spans.lua:11: instruction limit of 100000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_spans: library_spans.lua:12: instruction limit of 100000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_spans: library_spans.lua:13: instruction limit of 100000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_spans: library_spans.lua:14: instruction limit of 100000 exceeded [hook world, tick 0]
-- expect: usable 5 398000
