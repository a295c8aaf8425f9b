-- scenario: {"agents": 1, "max_steps": 2, "lua": {"instruction_limit": 20000}}
-- The budget is per callback, not per step or episode: many callbacks that each stay under
-- it never fail, however much they run in total.
local n = 0
for i = 1, 20 do
  polis.on("post", function()
    for k = 1, 1000 do n = n + 1 end
  end)
end
polis.on("end", function() polis.log("count", n) end)
-- expect: count 20000
-- expect: count 40000
