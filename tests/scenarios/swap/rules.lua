-- Replacement functions for tests/unit/test_swap.c: globals that a scenario's "replace"
-- entries name as "rules.<function>". The script registers nothing of its own.

function stop(agent) polis.terminate(agent) end

function even_only(agent) return agent % 2 == 0 end

function write_tick(agent, buf) buf[1] = polis.tick() * 10 + agent end

function reward_tick(agent) return polis.tick() + agent end

function team_mean(r)
  local sum = 0
  for a = 0, #r - 1 do sum = sum + r[a] end
  for a = 0, #r - 1 do r[a] = sum / #r end
end

function end_at_3()
  if polis.tick() == 3 then
    for a = 0, polis.n_agents() - 1 do polis.terminate(a) end
  end
end

function choose_noop(agent) return "noop" end

not_a_function = 7
