-- scenario: {"agents": 1, "max_steps": 1, "lua": {"instruction_limit": 100000}}
-- episodes: 4
-- on-error: reset
-- The budget counts every instruction and stops a script at the same one on every run: a
-- loop that counts its rounds gets exactly as far as the budget lets it, at the top of the
-- callback, in a coroutine (which checks its count every slice) and deep in the call
-- stack, and the next callback reads how far. A budget that stopped counting, counted less
-- or stopped late would change a count (and one that never stops meets the time limit).
local n = 0
local function count()
  while true do n = n + 1 end
end
local function deep(k)
  if k == 0 then return count() end
  return deep(k - 1) + 0 -- not a tail call: the frames stay
end
polis.on("world", function()
  if n > 0 then polis.log("rounds", n) end
  n = 0
  local e = polis.episode()
  if e == 1 then
    count()
  elseif e == 2 then
    coroutine.wrap(count)()
  elseif e == 3 then
    deep(100)
  end
end)
-- expect error: step: script error: budget_exact: budget_exact.lua:11: instruction limit of 100000 exceeded [hook world, tick 0]
-- expect: rounds 24997
-- expect error: step: script error: budget_exact: budget_exact.lua:11: instruction limit of 100000 exceeded [hook world, tick 0]
-- expect: rounds 24996
-- expect error: step: script error: budget_exact: budget_exact.lua:11: instruction limit of 100000 exceeded [hook world, tick 0]
-- expect: rounds 24834
