-- timers: callbacks scheduled for a future tick (respawns, cooldowns that end, delayed
-- effects), run in a deterministic order.
--
--   local timers = polis.require("timers")
--   local later = timers.new()
--   polis.on("reset", function() later:clear() end)
--   polis.on("world", function() later:run(polis.tick()) end)
--   ... later:at(polis.tick() + 5, respawn, agent)   -- runs respawn(agent) at tick + 5
--
-- run(t) calls, in order of their tick and then of scheduling, every callback due at a tick
-- up to t that has not run yet; a callback may schedule more (for a later tick, or for t
-- itself, which then runs in the same call). Ticks are integers.
local timers = {}

local Schedule = {}
Schedule.__index = Schedule

function timers.new()
  return setmetatable({due = {}, next_tick = nil, count = 0}, Schedule)
end

-- Schedules fn(arg) for tick `t`. One argument keeps the bookkeeping allocation-light; pass
-- a table or a closure for more.
function Schedule:at(t, fn, arg)
  if math.type(t) ~= "integer" then
    error("timers: the tick must be an integer, got " .. tostring(t), 2)
  end
  if type(fn) ~= "function" then
    error("timers: the callback must be a function, got " .. type(fn), 2)
  end
  local list = self.due[t]
  if not list then
    list = {n = 0}
    self.due[t] = list
  end
  local n = list.n
  list[n + 1], list[n + 2] = fn, arg
  list.n = n + 2
  self.count = self.count + 1
  if self.next_tick == nil or t < self.next_tick then self.next_tick = t end
end

-- Runs everything due at ticks <= t (see above).
function Schedule:run(t)
  while self.next_tick ~= nil and self.next_tick <= t do
    local tick = self.next_tick
    local list = self.due[tick]
    local i = 1
    while i <= list.n do
      local fn, arg = list[i], list[i + 1]
      i = i + 2
      self.count = self.count - 1
      fn(arg)
    end
    self.due[tick] = nil
    local nxt = nil
    for k in pairs(self.due) do
      if nxt == nil or k < nxt then nxt = k end
    end
    self.next_tick = nxt
  end
end

-- Forgets everything scheduled (call it at reset).
function Schedule:clear()
  self.due = {}
  self.next_tick = nil
  self.count = 0
end

-- The number of callbacks waiting.
function Schedule:pending()
  return self.count
end

return timers
