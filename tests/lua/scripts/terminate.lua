-- scenario: {"agents": 3, "max_steps": 5}
-- dump: done
-- polis.terminate / polis.truncate end an agent's episode; the env is done when every agent
-- is; they are refused outside an episode.
polis.log(pcall(polis.terminate, 0))
polis.on("end", function()
  if polis.tick() == 0 then polis.terminate(1) end
  if polis.tick() == 1 then polis.truncate(0) end
  if polis.tick() == 2 then polis.terminate(2) end
end)
-- expect: false polis.terminate: only during an episode
-- expect: t0 done: term 0 0 0 trunc 0 0 0
-- expect: t1 done: term 0 1 0 trunc 0 0 0
-- expect: t2 done: term 0 1 0 trunc 1 0 0
-- expect: t3 done: term 0 1 1 trunc 1 0 0
