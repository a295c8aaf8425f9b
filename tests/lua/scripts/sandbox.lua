-- scenario: {"agents": 1, "max_steps": 1}
-- The sandbox: only base (without dofile/loadfile), string, table, math, utf8 and coroutine.
for _, name in ipairs{"io", "os", "package", "require", "debug", "dofile", "loadfile"} do
  polis.log(name, type(_G[name]))
end
polis.log("string.dump", type(string.dump))
polis.log("libs", type(string.format), type(table.concat), type(math.floor), type(utf8.char),
          type(coroutine.wrap))
local f = load("return 1 + 2")
polis.log("load text", f())
local g, err = load("\27Lua\84\0\25\147\r\n\26\n", "=bin")
polis.log("load binary", g, err)
g, err = load("\27Lua\84\0", "=bin", "b")
polis.log("load binary, mode b", g, err)
polis.log("load sees the sandbox", load("return polis")() == polis, load("return io")())
local ok, e = pcall(math.randomseed, 1)
polis.log("randomseed", ok, e)
ok, e = pcall(collectgarbage, "stop")
polis.log("collectgarbage stop", ok, e)
polis.log("collectgarbage count", math.type(collectgarbage("count")),
          type(collectgarbage("step")))
ok, e = pcall(setmetatable, {}, {__gc = function() end})
polis.log("__gc", ok, e)
polis.log("setmetatable", getmetatable(setmetatable({}, {__index = {x = 1}})).__index.x)
print("print goes to the log", 1, nil, true)
ok, e = pcall(math.random)
polis.log("random at load", ok, e)
polis.log("polis.random is math.random", polis.random == math.random)
warn("@on")
warn("warnings go nowhere")
polis.log("warn", type(warn))
-- expect: io nil
-- expect: os nil
-- expect: package nil
-- expect: require nil
-- expect: debug nil
-- expect: dofile nil
-- expect: loadfile nil
-- expect: string.dump nil
-- expect: libs function function function function function
-- expect: load text 3
-- expect: load binary nil attempt to load a binary chunk (mode is 't')
-- expect: load binary, mode b nil attempt to load a binary chunk (mode is 't')
-- expect: load sees the sandbox true nil
-- expect: randomseed false math.randomseed is disabled: the env seed (given to reset) decides every random number
-- expect: collectgarbage stop false collectgarbage('stop') is not allowed in polis scripts (allowed: collect, count, step, isrunning)
-- expect: collectgarbage count float boolean
-- expect: __gc false setmetatable: __gc metamethods are not allowed in polis scripts
-- expect: setmetatable 1
-- expect: print goes to the log 1 nil true
-- expect: random at load false random: the env generator is seeded by reset; draw random numbers in callbacks, not while the script loads
-- expect: polis.random is math.random true
-- expect: warn function
