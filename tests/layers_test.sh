#!/usr/bin/env bash
# tests/layers_test.sh — tests/layers.sh catches what it should: small trees, each with the
# includes of the real layout plus bad ones, and the exact lines the check prints for them.
set -eu
CHECK="$(cd "$(dirname "$0")" && pwd)/layers.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fail() {
    printf 'FAIL: %s\n' "$*" >&2
    exit 1
}
# file content...: writes a file of the fake tree
put() {
    mkdir -p "$T/$(dirname "$1")"
    printf '%s\n' "${@:2}" >"$T/$1"
}

# The layout, with includes that are all allowed.
put include/polis/env.h '#include "polis/types.h"' '#include <stdint.h>'
put include/polis/types.h '#include <stddef.h>'
put engine/core/env.h '#include "polis/env.h"'
put engine/core/registry.h '#include "core/env.h"'
put engine/core/module.h '#include "core/registry.h"'
put engine/core/internal.h '#include "core/module.h"'
put engine/core/env.c '#include <lua.h>' '#include "internal.h"'
put engine/modules.c '#include "core/module.h"'
put engine/lua/internal.h '#include <lua.h>' '#include "core/module.h"'
put engine/lua/lua_run.c '#include "ffi/internal.h"' '#include "lua/internal.h"'
put engine/ffi/internal.h '#include "core/module.h"'
put engine/ffi/swap.c '#include "ffi/internal.h"' '#include "lua/internal.h"' '#include "policy/internal.h"'
put engine/policy/internal.h '#include "core/module.h"'
put engine/views/render.c '#include "core/module.h"'
put engine/pixels/raster.c '#include "polis/env.h"'
put engine/cli/main.c '#include "cmd/commands.h"' '#include "polis/env.h"'
put engine/cli/cmd/commands.h '#include "util/util.h"'
put engine/cli/cmd/run.c '#include "commands.h"' '#include "session/play.h"' \
    '#include "transport/lines.h"' '#include "polis/env.h"'
put engine/cli/session/play.h '#include "util/util.h"' '#include "polis/env.h"'
put engine/cli/transport/lines.h '#include "util/util.h"' '#include <stdio.h>'
put engine/cli/util/util.h '#include <stdio.h>' '#include "polis/types.h"'
put rulesets/g/g.c '#include "polis/env.h"' '#include "g.h"'
put rulesets/g/g.h ''
"$CHECK" "$T" >"$T/out" 2>&1 || { cat "$T/out"; fail "the clean tree was refused"; }

# One bad include of each kind. engine/lua.h also shows why headers live in folders: it is
# found for every <lua.h>.
put engine/core/env.c '#include <lua.h>' '#include "internal.h"' '#include "lua/internal.h"'
put engine/modules.c '#include "core/module.h"' '#include "ffi/internal.h"'
put engine/views/render.c '#include "core/module.h"' '#include "policy/internal.h"'
put engine/lua/lua_api.c '#include "core/internal.h"'
put engine/policy/plan.c '#include "../ffi/swap.c"'
put engine/pixels/raster.c '#include "polis/env.h"' '  #  include "core/env.h"'
put engine/cli/main.c '#include "cmd/commands.h"' '#include "lua/internal.h"'
put engine/cli/session/bad.c '#include "transport/lines.h"' '#include "util/util.h"'
put engine/cli/transport/lines.c '#include "lines.h"' '#include "polis/env.h"'
put engine/cli/util/util.c '#include "util.h"' '#include "../session/play.h"'
put engine/cli/misc/stray.c '#include "util/util.h"'
put rulesets/g/g.c '#include "polis/env.h"' '#include "../../engine/core/env.h"'
put include/polis/env.h '#include "polis/types.h"' '#include "core/env.h"'
put engine/lua.h ''
"$CHECK" "$T" >"$T/out" 2>&1 && { cat "$T/out"; fail "the bad tree passed"; }
cat >"$T/want" <<'WANT'
engine/lua.h: a header at the top of engine/ would shadow a system header of that name: put it in a folder
engine/cli/main.c:2: includes lua/internal.h (engine/lua/internal.h): engine/cli is built on the public API only: its own folder and include/polis
engine/cli/misc/stray.c: a file outside the layers of the program (engine/cli/README.md: cmd/ session/ transport/ util/ main.c)
engine/cli/session/bad.c:1: includes transport/lines.h (engine/cli/transport/lines.h): engine/cli/session/ may include session/ util/ polis/ (engine/cli/README.md)
engine/cli/transport/lines.c:2: includes polis/env.h (include/polis/env.h): engine/cli/transport/ may include transport/ util/ (engine/cli/README.md)
engine/cli/util/util.c:2: includes ../session/play.h (engine/cli/session/play.h): engine/cli/util/ may include util/ polis/ (engine/cli/README.md)
engine/core/env.c:1: includes lua.h (engine/lua.h): the kernel (engine/core) includes only core and public headers: modules plug in through engine/modules.c
engine/core/env.c:3: includes lua/internal.h (engine/lua/internal.h): the kernel (engine/core) includes only core and public headers: modules plug in through engine/modules.c
engine/lua/internal.h:1: includes lua.h (engine/lua.h): a module (engine/lua) includes its own folder, core/env.h, core/registry.h, core/module.h and public headers
engine/lua/lua_api.c:1: includes core/internal.h (engine/core/internal.h): a module (engine/lua) includes core/env.h, core/registry.h and core/module.h, not the kernel's own headers
engine/modules.c:2: includes ffi/internal.h (engine/ffi/internal.h): engine/modules.c includes only core/module.h and public headers (it declares the modules' descriptors itself)
engine/pixels/raster.c:2: includes core/env.h (engine/core/env.h): engine/pixels is built on the public API only: its own folder and include/polis
engine/policy/plan.c:1: includes ../ffi/swap.c (engine/ffi/swap.c): engine/policy may not include engine/ffi (allowed: no other module; docs/architecture.md)
engine/views/render.c:2: includes policy/internal.h (engine/policy/internal.h): engine/views may not include engine/policy (allowed: no other module; docs/architecture.md)
include/polis/env.h:2: includes core/env.h (engine/core/env.h): public headers include only public headers (include/polis)
rulesets/g/g.c:2: includes ../../engine/core/env.h (engine/core/env.h): plugins and rulesets use the plugin ABI only (include/polis), nothing under engine/
WANT
diff "$T/want" "$T/out" || fail "tests/layers.sh printed other lines than expected"

# ffi may use lua only through its internal header.
rm "$T/engine/lua.h"
for f in core/env.c modules.c views/render.c lua/lua_api.c policy/plan.c pixels/raster.c cli/main.c \
    cli/session/bad.c cli/transport/lines.c cli/util/util.c cli/misc/stray.c; do
    rm "$T/engine/$f"
done
rm "$T/rulesets/g/g.c" "$T/include/polis/env.h"
put include/polis/env.h '#include "polis/types.h"'
put engine/lua/lua_host.c ''
put engine/ffi/ffi.c '#include "lua/lua_host.c"'
"$CHECK" "$T" >"$T/out" 2>&1 && { cat "$T/out"; fail "ffi including lua_host.c passed"; }
grep -qxF 'engine/ffi/ffi.c:1: includes lua/lua_host.c (engine/lua/lua_host.c): engine/ffi may use engine/lua only through engine/lua/internal.h' "$T/out" ||
    { cat "$T/out"; fail "ffi including lua_host.c: wrong message"; }

# In a checkout (a CMakeLists.txt at the top) a folder the tables name must hold files: the
# test tree has no engine/scene, engine/record, ... nor engine/cli/main.c.
rm "$T/engine/ffi/ffi.c"
"$CHECK" "$T" >"$T/out" 2>&1 || { cat "$T/out"; fail "the clean tree was refused"; }
: >"$T/CMakeLists.txt"
"$CHECK" "$T" >"$T/out" 2>&1 && { cat "$T/out"; fail "a checkout without engine/scene passed"; }
for d in engine/scene/ engine/record/ engine/cli/main.c; do
    grep -qxF "$d: no C file there: the tables of tests/layers.sh name a folder that moved" "$T/out" ||
        { cat "$T/out"; fail "a checkout without $d: no message"; }
done
grep -q '^engine/core/\|^engine/cli/cmd/' "$T/out" && { cat "$T/out"; fail "folders with files were named"; }
echo "layers_test: ok"
