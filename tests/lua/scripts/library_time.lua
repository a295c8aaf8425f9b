-- scenario: {"agents": 1, "max_steps": 1, "lua": {"instruction_limit": 0, "time_limit_ms": 1000}}
-- episodes: 8
-- on-error: reset
-- timeout: 120
-- max-ms: 6000
-- One call of a library function cannot do unbounded work inside a single instruction, and
-- a cheap loop over such calls cannot either: each charges its work, and the clock is read
-- wall-clock limit (here alone, without the instruction budget), so every vector fails at
-- its line within the limit. Then the env works again.
local s200, s800 = string.rep("a", 200), string.rep("a", 800)
local big = {}
for i = 1, 30000 do big[i] = i end -- (episode 7 stops inside an insert or a remove: 30,000 or 30,001 left)
polis.on("world", function()
  local e = polis.episode()
  if e == 1 then polis.log("empty rep", #string.rep("", 2^34), #string.rep("", 2^34, "")) end
  if e == 1 then while true do string.rep("", 2^34) end end
  if e == 2 then string.rep("x", 2^34) end
  if e == 3 then table.move({}, 1, 2^30, 2) end
  if e == 4 then s800:find(".-.-.-.-b") end
  if e == 5 then for _ in s800:gmatch(".-.-.-.-b") do end end
  if e == 6 then s800:gsub("(.-)(.-)(.-)b", "") end
  if e == 7 then while true do table.insert(big, 1, 0); table.remove(big, 1) end end
  polis.log("usable", e, #big == 30000 or #big == 30001, big[#big] == 30000, s200:find("a+$"))
end)
-- expect: empty rep 0 0
-- expect error: step: script error: library_time: library_time.lua:16: time limit of 1000 ms exceeded [hook world, tick 0]
-- expect error: step: script error: library_time: library_time.lua:17: resulting string too large [hook world, tick 0]
-- expect error: step: script error: library_time: library_time.lua:18: time limit of 1000 ms exceeded [hook world, tick 0]
-- expect error: step: script error: library_time: library_time.lua:19: time limit of 1000 ms exceeded [hook world, tick 0]
-- expect error: step: script error: library_time: library_time.lua:20: time limit of 1000 ms exceeded [hook world, tick 0]
-- expect error: step: script error: library_time: library_time.lua:21: time limit of 1000 ms exceeded [hook world, tick 0]
-- expect error: step: script error: library_time: library_time.lua:22: time limit of 1000 ms exceeded [hook world, tick 0]
-- expect: usable 8 true true 1 200
