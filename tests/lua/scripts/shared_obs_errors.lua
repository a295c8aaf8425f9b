-- scenario: {"agents": 2, "max_steps": 1, "lua": {"instruction_limit": 100000}}
-- episodes: 9
-- on-error: reset
-- polis.shared_observation refuses a bad registration with its reason, and each bad write
-- fails the reset or step with file:line, the field and the tick: a value out of the dtype's
-- range, a float for an integer dtype, an index outside the field, a kept buffer, a bad
-- table element, an endless loop (the instruction limit). The last episode runs clean.
local function try(t)
  local ok, e = pcall(polis.shared_observation, t)
  polis.log((e:gsub("with the %d+ bytes", "with the N bytes")))
end
local w = function(buf) end
try{name = "a", dtype = "u9", shape = {1}, write = w}
try{name = "a", dtype = "u8", shape = {0}, write = w}
try{name = "a", dtype = "u8", shape = {1, 2, 3, 4, 5}, write = w}
try{name = "a", dtype = "u8", write = w}
try{name = "a", dtype = "u8", shape = {1}}
try{name = "a", dtype = "u8", shape = {1}, write = w, values = {}}
try{name = "a", dtype = "u8", shape = {1}, write_all = w}
try{name = "a", dtype = "u8", shape = {1}, write = w, range = {0, 1}}
try{name = "a", dtype = "u8", shape = {1}, write = 3}
try{dtype = "u8", shape = {1}, write = w}
try{name = "a", dtype = "u8", shape = {4096, 4096, 32}, write = w}
polis.observation{name = "me", dtype = "u8", shape = {1}, write = function(a, buf) end}
try{name = "me", dtype = "u8", shape = {1}, write = w}
polis.shared_observation{name = "dup", dtype = "u8", shape = {1}, write = w}
try{name = "dup", dtype = "u8", shape = {1}, write = w}
local ok, e = pcall(polis.observation, {name = "dup", dtype = "u8", shape = {1}, write = w})
polis.log(e)
local kept
local t = {}
polis.shared_observation{name = "s", dtype = "u8", shape = {2, 2}, write = function(buf)
  local ep = polis.episode()
  if ep == 1 then buf[4] = 256 end
  if ep == 2 then buf[1] = 1.5 end
  if ep == 3 then buf[5] = 1 end
  if ep == 4 then buf[1] = "7" end
  if ep == 5 then kept = buf end
  if ep == 7 and polis.tick() == 1 then while true do end end
  buf[1] = ep
end}
polis.shared_observation{name = "t", dtype = "i8", shape = {2}, values = t}
polis.on("reset", function()
  t[1], t[2] = 1, 2
  if polis.episode() == 6 then t[2] = -129 end
  if polis.episode() == 8 then t[1] = "x" end
end)
polis.on("end", function()
  local k = kept
  kept = nil
  if k then return k[1] end -- a buffer kept from its writer
  polis.log("end", polis.episode(), polis.tick())
end)
polis.on_start(function()
  ok, e = pcall(polis.shared_observation, {name = "late", dtype = "u8", shape = {1}, write = w})
  polis.log("on_start", ok)
end)
polis.on("reset", function()
  if polis.episode() == 1 then
    ok, e = pcall(polis.shared_observation, {name = "later", dtype = "u8", shape = {1}, write = w})
    polis.log(e)
  end
end)
-- expect: polis.shared_observation('a'): unknown dtype 'u9' (dtypes: u8, i8, i16, i32, f32)
-- expect: polis.shared_observation('a'): shape[1] must be an integer in [1, 16777216]
-- expect: polis.shared_observation('a'): shape has 5 dimensions (1 to 4)
-- expect: polis.shared_observation('a'): field 'shape' must be a table of 1 to 4 positive integers
-- expect: polis.shared_observation('a'): give one of 'write' (a function of the buffer) and 'values' (a table of the field's elements), got 0
-- expect: polis.shared_observation('a'): give one of 'write' (a function of the buffer) and 'values' (a table of the field's elements), got 2
-- expect: polis.shared_observation('a'): 'write_all' is for per-agent fields; a shared field has one buffer: give 'write' or 'values'
-- expect: polis.shared_observation('a'): a shared field declares no range (ranges are for per-agent fields, polis.observation)
-- expect: polis.shared_observation: field 'write' must be a function, got number
-- expect: polis.shared_observation: field 'name' must be a string, got nil
-- expect: polis.shared_observation('a') needs 536870912 bytes of engine memory; with the N bytes the env's scripts already hold that exceeds lua_memory_limit of 67108864 bytes
-- expect: shared observation "me" is already registered (per agent) by shared_obs_errors
-- expect: shared observation "dup" is already registered by shared_obs_errors
-- expect: observation "dup" is already registered (shared) by shared_obs_errors
-- expect: on_start true
-- expect: polis.shared_observation: registration is only allowed while the script loads (in its chunk or a polis.on_start function)
-- expect error: reset: script error: shared_obs_errors: shared_obs_errors.lua:34: shared observation 's'[4]: 256 is outside the u8 range [0, 255] [shared observation s, tick 0]
-- expect error: shared_obs_errors.lua:35: shared observation 's'[1]: 1.5 is not an integer (dtype u8) [shared observation s, tick 0]
-- expect error: shared_obs_errors.lua:36: shared observation 's': index 5 is outside [1, 4] [shared observation s, tick 0]
-- expect error: shared_obs_errors.lua:37: shared observation 's'[1]: value must be a number, got string [shared observation s, tick 0]
-- expect error: step: script error: shared_obs_errors: shared_obs_errors.lua:51: the observation buffer is only valid while its writer runs (do not keep it) [hook end, tick 0]
-- expect error: reset: script error: shared_obs_errors: shared_obs_errors.lua:42: shared observation 't': the table's [2]: -129 is outside the i8 range [-128, 127] [shared observation t, tick 0]
-- expect: end 7 0
-- expect error: step: script error: shared_obs_errors: shared_obs_errors.lua:39: instruction limit of 100000 exceeded [shared observation s, tick 1]
-- expect error: reset: script error: shared_obs_errors: shared_obs_errors.lua:42: shared observation 't': the table's [1]: value must be a number, got string [shared observation t, tick 0]
-- expect: end 9 0
