-- scenario: {"agents": 1, "max_steps": 1}
-- polis.require loads the engine's own Lua modules (lua/polis/<name>.lua), once per script,
-- in the script's sandbox; names that could reach any other file are refused.
local grid = polis.require("grid")
polis.log("grid", type(grid), grid.NORTH, grid.WEST, polis.require("grid") == grid)
local timers = polis.require("timers")
polis.log("timers", type(timers.new))
local json = polis.require("json")
polis.log("json", json.encode({b = 1, a = {true, "x"}}))
for _, name in ipairs{"../grid", "/etc/passwd", "grid.lua/..", "a..b", ".grid", "grid.", "",
                      "Grid", "gr-id", "polis/grid", string.rep("a", 65)} do
  local ok, e = pcall(polis.require, name)
  polis.log(ok, (e:gsub(string.rep("a", 65), "<65 a>")))
end
local ok, e = pcall(polis.require, "nope")
polis.log(ok, e:match("^polis.require: no module 'nope' %(looked for .*/polis/nope%.lua%)$") ~= nil)
ok, e = pcall(polis.require, "sub.nope")
polis.log(ok, e:match("looked for .*/polis/sub/nope%.lua%)$") ~= nil)
ok, e = pcall(polis.require, {})
polis.log(ok, e)
-- the module runs in this script's globals: it sees polis and not io
polis.log("sandboxed", grid.pick_free ~= nil, rawget(_G, "io"))
polis.on("reset", function()
  polis.log("cached", polis.require("json") == json)
  local ok2, e2 = pcall(polis.require, "json.none")
  polis.log(ok2, e2)
  polis.log("pick", grid.pick_free({{0, 0}, {1, 0}, {2, 0}}, function(x) return x == 1 end))
end)
-- expect: grid table 0 3 true
-- expect: timers function
-- expect: json {"a":[true,"x"],"b":1}
-- expect: false polis.require: '../grid' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: '/etc/passwd' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: 'grid.lua/..' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: 'a..b' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: '.grid' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: 'grid.' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: '' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: 'Grid' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: 'gr-id' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: 'polis/grid' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false polis.require: '<65 a>' is not a module name (words of a-z, 0-9 and _ joined by dots, e.g. "grid")
-- expect: false true
-- expect: false true
-- expect: false bad argument #1 to 'polis.require' (string expected, got table)
-- expect: sandboxed true nil
-- expect: cached true
-- expect: false polis.require: module 'json.none' was not loaded while the script loaded (require modules in the chunk or a polis.on_start function)
-- expect: pick 2
