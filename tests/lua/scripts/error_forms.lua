-- scenario: {"agents": 1, "max_steps": 1}
-- episodes: 7
-- on-error: reset
-- However a script fails, the env error starts with script:line.
local function deep()
  error("deep", 2)
end
polis.on("world", function()
  local e = polis.episode()
  if e == 1 then error({code = 1}) end
  if e == 2 then error("plain", 0) end
  if e == 3 then polis.error("custom") end
  if e == 4 then error(setmetatable({}, {__tostring = function() return "shown" end})) end
  if e == 5 then local x = nil; x = x + 1 end
  if e == 6 then deep() end
  polis.log("clean", e)
end)
-- expect error: step: script error: error_forms: error_forms.lua:10: (error object is a table value) [hook world, tick 0]
-- expect error: step: script error: error_forms: error_forms.lua:11: plain [hook world, tick 0]
-- expect error: step: script error: error_forms: error_forms.lua:12: custom [hook world, tick 0]
-- expect error: step: script error: error_forms: error_forms.lua:13: shown [hook world, tick 0]
-- expect error: step: script error: error_forms: error_forms.lua:14: attempt to perform arithmetic on a nil value (local 'x') [hook world, tick 0]
-- expect error: step: script error: error_forms: error_forms.lua:15: deep [hook world, tick 0]
-- expect: clean 7
