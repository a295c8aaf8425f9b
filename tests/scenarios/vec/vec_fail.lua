-- vec_fail.lua: failures for the polis_vec tests. mode "step": the post hook of tick 2
-- fails in about one env of three, chosen by the env's own generator, so which envs fail
-- depends on their seeds only. mode "reset": the third reset of an env fails.
local p = polis.params{
  {key = "mode", type = "string", default = "step", doc = "step or reset"},
}

polis.on("post", function()
  if p.mode == "step" and polis.tick() == 2 and polis.random(3) == 1 then
    polis.error("unlucky env")
  end
end)

polis.on("reset", function()
  if p.mode == "reset" and polis.episode() == 3 then
    polis.error("no third episode")
  end
end)
