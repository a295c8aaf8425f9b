-- script_params.lua: declares one parameter of each type, for `polis describe`.
polis.params{
  {key = "steps", type = "int", default = 3, min = 1, max = 9, doc = "steps per move"},
  {key = "rate", type = "double", default = 0.25, min = 0, max = 1, doc = "a probability"},
  {key = "label", type = "string", required = true, doc = "a name"},
  {key = "title", type = "string", doc = "left unset"},
  {key = "fast", type = "bool", default = true},
}
