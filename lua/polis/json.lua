-- json: deterministic JSON text for renderers (polis.renderer("json", ...)).
--
--   local json = polis.require("json")
--   json.encode({position = {3, 4}, name = "agent_0"})  --> {"name":"agent_0","position":[3,4]}
--
-- Tables whose keys are exactly 1..n encode as arrays, other tables as objects with their
-- keys sorted, so the same value always gives the same text. An empty table is an array
-- unless it is json.object({}) (json.object marks any table as an object). Integers encode
-- as integers, other numbers with up to 17 significant digits; NaN, infinities, functions
-- and non-string object keys are errors that name the path of the bad value.
local json = {}

local object_mt = {__name = "json.object"}

-- Marks t (by default a new table) as an object, so that an empty one encodes as {}.
function json.object(t)
  return setmetatable(t or {}, object_mt)
end

json.null = setmetatable({}, {__name = "json.null"})

local ESCAPES = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}

local function escape_char(c)
  return ESCAPES[c] or string.format("\\u%04x", c:byte())
end

-- The JSON string literal of s (control characters escaped; other bytes as they are).
function json.quote(s)
  return '"' .. s:gsub('[%c"\\]', escape_char) .. '"'
end

local encode_value

local function is_array(t)
  if getmetatable(t) == object_mt then return false end
  local n = #t
  local count = 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
    count = count + 1
  end
  return count == n
end

local function encode_table(t, out, path, depth)
  if depth > 64 then error("json.encode: " .. path .. ": nested deeper than 64 levels", 0) end
  if is_array(t) then
    out[#out + 1] = "["
    for i = 1, #t do
      if i > 1 then out[#out + 1] = "," end
      encode_value(t[i], out, path .. "[" .. i .. "]", depth + 1)
    end
    out[#out + 1] = "]"
    return
  end
  local keys = {}
  for k in pairs(t) do
    if type(k) ~= "string" then
      error("json.encode: " .. path .. ": object key " .. tostring(k) .. " is not a string", 0)
    end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    out[#out + 1] = json.quote(k)
    out[#out + 1] = ":"
    encode_value(t[k], out, path .. "." .. k, depth + 1)
  end
  out[#out + 1] = "}"
end

encode_value = function(v, out, path, depth)
  local t = type(v)
  if t == "string" then
    out[#out + 1] = json.quote(v)
  elseif t == "number" then
    if math.type(v) == "integer" then
      out[#out + 1] = string.format("%d", v)
    elseif v ~= v or v == math.huge or v == -math.huge then
      local what = v ~= v and "NaN" or (v > 0 and "inf" or "-inf")
      error("json.encode: " .. path .. ": " .. what .. " is not a JSON number", 0)
    elseif v == math.floor(v) and math.abs(v) < 2 ^ 53 then
      out[#out + 1] = string.format("%.1f", v)
    else
      local s = string.format("%.14g", v)
      if tonumber(s) ~= v then s = string.format("%.17g", v) end
      out[#out + 1] = s
    end
  elseif t == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif v == json.null then
    out[#out + 1] = "null"
  elseif t == "table" then
    encode_table(v, out, path, depth)
  else
    error("json.encode: " .. path .. ": cannot encode a " .. t, 0)
  end
end

-- The JSON text of v.
function json.encode(v)
  local out = {}
  encode_value(v, out, "value", 0)
  return table.concat(out)
end

return json
