-- A rule that renders a line per agent and parses "wave" and "act N" actions; used by
-- tests/unit/test_lua_render.c.
polis.action{name = "wave", handler = function(agent) end}

polis.renderer("text", function(agent)
  return string.format("agent %d at tick %d\n", agent, polis.tick())
end)

polis.renderer("json", function(agent)
  if agent == 1 then return "{\"broken\": " end
  return string.format("{\"agent\": %d}", agent)
end)

polis.action_parser(function(agent, input)
  if input == "wave hello" then return "wave" end
  local n = input:match("^act (%-?%d+)$")
  if n then return tonumber(n) end
  if input == "explode" then error("cannot explode here") end
  if input == "bad name" then return "no_such_action" end
  if input == "bad type" then return {} end
  return nil
end)
