-- script_plain.lua: declares no parameters.
polis.on("begin", function() end)
