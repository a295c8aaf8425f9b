-- helpers/other.lua: the second script of two_scripts.lua (not a test by itself).
local p = polis.params{{key = "greeting", type = "string", default = "hello"}}
polis.log(p.greeting, shared)
polis.event("chat.reply", {{"n", "i32"}})
polis.subscribe("chat.msg", function(ev)
  polis.log("got", ev.from)
  polis.publish("chat.reply", {n = ev.from + 1})
end)
