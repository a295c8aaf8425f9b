-- mob_counts.lua (survival_test_env): the active mobs of each kind (survival.active_mobs) on
-- the bus after every reset and step, for the scene's things to be checked against the game.
polis.event("mob_counts.active",
            {{"zombies", "i32"}, {"cows", "i32"}, {"skeletons", "i32"}, {"arrows", "i32"}})

polis.on("observe", function()
  polis.publish("mob_counts.active", {
    zombies = polis.call("survival.active_mobs", 0),
    cows = polis.call("survival.active_mobs", 1),
    skeletons = polis.call("survival.active_mobs", 2),
    arrows = polis.call("survival.active_mobs", 3),
  })
end, 100)
