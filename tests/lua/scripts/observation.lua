-- scenario: {"agents": 2, "max_steps": 1}
-- dump: obs
-- Observation fields of every dtype, checked through polis_env_io. The writer sees the
-- agent's slice as a flat 1-based array; elements it does not set are 0.
polis.observation{name = "pos", dtype = "i32", shape = {2}, write = function(agent, buf)
  buf[1] = agent * 10 - 5
  buf[2] = polis.tick()
end}
polis.observation{name = "block", doc = "2x3 u8", dtype = "u8", shape = {2, 3},
  write = function(agent, buf)
    for i = 1, #buf do buf[i] = i + agent end
  end}
polis.observation{name = "small", dtype = "i8", shape = {3}, write = function(agent, buf)
  buf[1] = -128
  buf[2] = 127
  buf[3] = buf[1] + 1
end}
polis.observation{name = "mid", dtype = "i16", shape = {1}, write = function(agent, buf)
  buf[1] = -32768
end}
polis.observation{name = "feat", dtype = "f32", shape = {2}, write = function(agent, buf)
  buf[1] = 0.5 * agent
end}
-- expect: t0 obs pos a0: -5 0
-- expect: t0 obs pos a1: 5 0
-- expect: t0 obs block a0: 1 2 3 4 5 6
-- expect: t0 obs block a1: 2 3 4 5 6 7
-- expect: t0 obs small a0: -128 127 -127
-- expect: t0 obs small a1: -128 127 -127
-- expect: t0 obs mid a0: -32768
-- expect: t0 obs mid a1: -32768
-- expect: t0 obs feat a0: 0 0
-- expect: t0 obs feat a1: 0.5 0
-- expect: t1 obs pos a0: -5 1
-- expect: t1 obs pos a1: 5 1
-- expect: t1 obs block a0: 1 2 3 4 5 6
-- expect: t1 obs block a1: 2 3 4 5 6 7
-- expect: t1 obs small a0: -128 127 -127
-- expect: t1 obs small a1: -128 127 -127
-- expect: t1 obs mid a0: -32768
-- expect: t1 obs mid a1: -32768
-- expect: t1 obs feat a0: 0 0
-- expect: t1 obs feat a1: 0.5 0
