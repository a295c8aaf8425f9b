-- helpers/hog.lua: tries to keep 350 kB (see memory_shared.lua).
big = string.rep("y", 350000)
polis.log("never printed", #big)
