-- scenario: {"agents": 1, "max_steps": 1}
-- polis.random = math.random, with Lua 5.4's argument rules and range errors.
polis.on("reset", function()
  local okf = true
  for i = 1, 1000 do
    local x = math.random()
    if x < 0 or x >= 1 or math.type(x) ~= "float" then okf = false end
  end
  polis.log("random() in [0, 1)", okf)
  local function range(...)
    local lo, hi, seen, n = math.huge, -math.huge, {}, 0
    for i = 1, 3000 do
      local x = math.random(...)
      if not seen[x] then n = n + 1 end
      seen[x] = true
      lo, hi = math.min(lo, x), math.max(hi, x)
    end
    return lo, hi, n, math.type(lo)
  end
  polis.log("random(6)", range(6))
  polis.log("random(-3, 3)", range(-3, 3))
  polis.log("random(4, 4)", range(4, 4))
  local big = math.random(math.mininteger, math.maxinteger)
  polis.log("full range", math.type(big), math.type(math.random(0)))
  local x = math.random(2 ^ 53 // 1, 2 ^ 53 // 1 + 1)
  polis.log("wide", x == 2 ^ 53 // 1 or x == 2 ^ 53 // 1 + 1)
  for _, args in ipairs{{2, 1}, {0, -1}, {1, 2, 3}, {1.5}, {"x"}} do
    local ok, e = pcall(math.random, table.unpack(args))
    polis.log(ok, (e:gsub("'[%w.]*random'", "'random'")))
  end
end)
-- expect: random() in [0, 1) true
-- expect: random(6) 1 6 6 integer
-- expect: random(-3, 3) -3 3 7 integer
-- expect: random(4, 4) 4 4 1 integer
-- expect: full range integer integer
-- expect: wide true
-- expect: false bad argument #1 to 'random' (interval is empty)
-- expect: false bad argument #1 to 'random' (interval is empty)
-- expect: false wrong number of arguments
-- expect: false bad argument #1 to 'random' (number has no integer representation)
-- expect: false bad argument #1 to 'random' (number expected, got string)
