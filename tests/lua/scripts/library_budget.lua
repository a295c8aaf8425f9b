-- scenario: {"agents": 1, "max_steps": 1, "lua": {"instruction_limit": 1000000, "time_limit_ms": 0}}
-- episodes: 8
-- on-error: reset
-- timeout: 120
-- max-ms: 5000
-- One call of a library function cannot do unbounded work inside a single instruction, and
-- a cheap loop over such calls cannot either: each charges its work to the instruction
-- budget, so every vector fails at its line, deterministically. Then the env works again.
local s200 = string.rep("a", 200)
local big = {}
for i = 1, 100000 do big[i] = i end -- (the loop of episode 7 stops between insert and remove)
polis.on("world", function()
  local e = polis.episode()
  if e == 1 then polis.log("empty rep", #string.rep("", 2^34), #string.rep("", 2^34, "")) end
  if e == 1 then while true do string.rep("", 2^34) end end
  if e == 2 then string.rep("x", 2^34) end
  if e == 3 then table.move({}, 1, 2^30, 2) end
  if e == 4 then s200:find(".-.-.-.-b") end
  if e == 5 then for _ in s200:gmatch(".-.-.-.-b") do end end
  if e == 6 then s200:gsub("(.-)(.-)(.-)b", "") end
  if e == 7 then while true do table.insert(big, 1, 0); table.remove(big, 1) end end
  polis.log("usable", e, #big, s200:find("a+$"))
end)
-- expect: empty rep 0 0
-- expect error: step: script error: library_budget: library_budget.lua:15: instruction limit of 1000000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_budget: library_budget.lua:16: instruction limit of 1000000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_budget: library_budget.lua:17: instruction limit of 1000000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_budget: library_budget.lua:18: instruction limit of 1000000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_budget: library_budget.lua:19: instruction limit of 1000000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_budget: library_budget.lua:20: instruction limit of 1000000 exceeded [hook world, tick 0]
-- expect error: step: script error: library_budget: library_budget.lua:21: instruction limit of 1000000 exceeded [hook world, tick 0]
-- expect: usable 8 100001 1 200
