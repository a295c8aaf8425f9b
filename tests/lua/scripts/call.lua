-- scenario: {"agents": 2, "max_steps": 1, "plugins": [{"name": "ffi_exports"}]}
-- plugins: test
-- polis.call reaches a plugin's exported C functions through libffi, converting arguments
-- by the declared signature; a Lua script also subscribes to a .so plugin's events.
polis.on("reset", function()
  polis.log("add", polis.call("ffi_exports.add", 2, 40))
  polis.log("big", polis.call("ffi_exports.big", 5000000000))
  polis.log("scale", polis.call("ffi_exports.scale", 1.5, 2))
  polis.log("bools", polis.call("ffi_exports.is_even", 4), polis.call("ffi_exports.not_", true))
  polis.log("mulf", polis.call("ffi_exports.mulf", 1.5, 2))
  polis.log("strlen", polis.call("ffi_exports.strlen_", "hello"))
  polis.log("ctx", polis.call("ffi_exports.agents"))
  polis.log("parity", polis.call("ffi_exports.parity", 7))
  polis.log("void", select("#", polis.call("ffi_exports.note", 99)))
  polis.log("sum16", polis.call("ffi_exports.sum16", 1, 1, 1, 1, true, 1, 1, 1, 1, false, 1, 1,
                                1, 1, true, 1))
  for _, args in ipairs{{"ffi_exports.add", 1}, {"ffi_exports.add", 1, 2.5},
                        {"ffi_exports.add", 1, 2147483648}, {"ffi_exports.not_", 1},
                        {"ffi_exports.strlen_", 5}, {"ffi_exports.mulf", 1e300, 1},
                        {"ffi_exports.nope"}, {"nodot"}, {"ffi_exports.bad", 1, 2}} do
    local ok, e = pcall(polis.call, table.unpack(args))
    polis.log(ok, e)
  end
end)
polis.subscribe("ffi.ping", function(ev)
  polis.log("ping", ev.agent, ev.value, ev.count, ev.tick)
end)
polis.subscribe("ffi.mixed", function(ev) polis.log("mixed", ev.a, ev.b, ev.c, ev.d) end)
-- expect: add 42
-- expect: big 14999999999
-- expect: scale 3.0
-- expect: bools true false
-- expect: mulf 3.0
-- expect: strlen 5
-- expect: ctx 2
-- expect: parity odd
-- expect: void 0
-- expect: sum16 126.0
-- expect: false polis.call('ffi_exports.add'): i32(i32,i32) takes 2 arguments, got 1
-- expect: false polis.call('ffi_exports.add'): argument 2 must be an i32, got 2.5
-- expect: false polis.call('ffi_exports.add'): argument 2 must be an i32, got 2147483648
-- expect: false polis.call('ffi_exports.not_'): argument 1 must be a bool, got 1
-- expect: false polis.call('ffi_exports.strlen_'): argument 1 must be a str, got 5
-- expect: false polis.call('ffi_exports.mulf'): argument 1 must be a f32, got 1e+300
-- expect: false "ffi_exports.nope": plugin ffi_exports has no export "nope" (it exports: on_ping, on_ping_i32, on_mixed, on_begin, guard, add, scale, big, is_even, not_, mulf, strlen_, agents, parity, note, sum16, bad, ctx_late, too_many, unknown_type, void_param, trailing, ctx_ret, no_paren, on_ping_short, on_ping_f32, on_ping_noctx, no_fn)
-- expect: false "nodot" does not name an export (expected "plugin.export")
-- expect: false plugin ffi_exports: export "bad": signature "i32(i32,,f64)": expected a type at column 9
-- expect: ping 0 -2.125 4000000007 0
-- expect: ping 1 -3.625 -4000000006 0
-- expect: mixed 0.25 -1 0.5 7
