# tests/install/install_test.sh CMAKE GENERATOR CC SOURCE_DIR WORK_DIR
set -eu
CMAKE=$1
GEN=$2
CC=$3
SRC=$4
WORK=$5
PREFIX=$WORK/prefix
unset POLIS_PLUGIN_PATH
# The release the headers say (include/polis/version.h), which every installed piece reports.
VERSION=$(sed -n 's/^#define POLIS_VERSION_STRING "\(.*\)"$/\1/p' "$SRC/include/polis/version.h")
[ -n "$VERSION" ] || { echo "FAIL: no POLIS_VERSION_STRING in include/polis/version.h" >&2; exit 1; }

step() { printf '\n== %s\n' "$*"; }
die() {
    printf 'FAIL: %s\n' "$*" >&2
    exit 1
}
# Sanitizer settings of the calling test run do not apply to these plain builds.
unset ASAN_OPTIONS UBSAN_OPTIONS || true

rm -rf "$WORK"
mkdir -p "$WORK"

step "configure, build and install polis into $PREFIX"
"$CMAKE" -S "$SRC" -B "$WORK/build" -G "$GEN" -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_BUILD_TYPE=Release -DPOLIS_BUILD_TESTS=OFF -DPOLIS_SANITIZE=OFF \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" >"$WORK/configure.log" ||
    { cat "$WORK/configure.log"; die "configure failed"; }
"$CMAKE" --build "$WORK/build" -j2 >"$WORK/build.log" 2>&1 ||
    { cat "$WORK/build.log"; die "build failed"; }
"$CMAKE" --install "$WORK/build" >"$WORK/install.log" ||
    { cat "$WORK/install.log"; die "cmake --install failed"; }

# GNUInstallDirs picks lib or lib64 or lib/<multiarch>; find where things went.
PC=$(find "$PREFIX" -name polis.pc | head -n 1)
[ -n "$PC" ] || die "no polis.pc under $PREFIX"
LIBDIR=$(dirname "$(dirname "$PC")")
for f in "$PREFIX/bin/polis" "$PREFIX/include/polis/polis.h" "$PREFIX/include/polis/plugin.h" \
    "$PREFIX/include/polis/types.h" "$PREFIX/include/polis/rng.h" "$LIBDIR/libpolis.a" \
    "$PREFIX/include/polis/version.h" "$PREFIX/include/polis/kit.h" \
    "$PREFIX/include/polis/env.h" "$PREFIX/include/polis/views.h" \
    "$PREFIX/include/polis/policy.h" "$PREFIX/include/polis/scene.h" \
    "$PREFIX/include/polis/vec.h" "$PREFIX/include/polis/record.h" \
    "$PREFIX/include/polis/pixels.h" \
    "$LIBDIR/libpolis-record.so" "$LIBDIR/libpolis-record.a" "$LIBDIR/libpolis-pixels.so" \
    "$LIBDIR/libpolis-pixels.a" "$LIBDIR/pkgconfig/polis-record.pc" \
    "$LIBDIR/pkgconfig/polis-pixels.pc" \
    "$LIBDIR/libpolis.so" "$LIBDIR/polis/plugins/gather.so" \
    "$LIBDIR/cmake/polis/polisConfig.cmake" "$LIBDIR/cmake/polis/polisConfigVersion.cmake" \
    "$LIBDIR/cmake/polis/polisTargets.cmake"; do
    [ -e "$f" ] || die "not installed: $f"
done
echo "installed: $(find "$PREFIX" -type f | wc -l) files"
# Recording and pixels are libraries of their own: libpolis itself needs no zlib.
if readelf -d "$LIBDIR/libpolis.so" | grep -q 'NEEDED.*libz\.'; then
    readelf -d "$LIBDIR/libpolis.so" | grep NEEDED
    die "libpolis.so links zlib"
fi
# its deflater: ISA-L's igzip (libisal) when the build found it, else zlib
readelf -d "$LIBDIR/libpolis-record.so" | grep -qE 'NEEDED.*lib(z|isal)\.' ||
    die "libpolis-record.so links neither zlib nor libisal"
readelf -d "$LIBDIR/libpolis-record.so" | grep -q 'NEEDED.*libpolis\.so' ||
    die "libpolis-record.so does not link libpolis.so"

# From here on nothing may come from the build tree: the installed library must find the
# installed plugins by itself.
rm -rf "$WORK/build"
POLIS=$PREFIX/bin/polis
export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "installed polis runs an installed scenario with an installed plugin"
"$POLIS" --version | grep -qxF "polis $VERSION" || die "polis --version"
GATHER=$PREFIX/share/polis/rulesets/gather/gather.json
[ -f "$GATHER" ] || GATHER=$SRC/rulesets/gather/gather.json
"$POLIS" validate "$GATHER" >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "polis validate $GATHER"; }
grep -qxF "ok: gather: 4 agents, 5 actions, 64 obs bytes" "$WORK/out" || { cat "$WORK/out"; die "validate output"; }
"$POLIS" describe "$GATHER" --json >"$WORK/out" || die "polis describe"
grep -qF "\"$LIBDIR/polis/plugins/gather.so\"" "$WORK/out" ||
    { grep -F '"path"' "$WORK/out"; die "gather.so was not loaded from $LIBDIR/polis/plugins"; }

step "installed polis runs an installed Lua game that loads the installed Lua modules"
COMMONS=$PREFIX/share/polis/rulesets/commons/commons_open.json
[ -f "$PREFIX/share/polis/lua/polis/grid.lua" ] || die "lua/polis/grid.lua not installed"
"$POLIS" validate "$COMMONS" >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "polis validate $COMMONS"; }
grep -qxF "ok: commons_open: 7 agents, 8 actions, 136 obs bytes" "$WORK/out" ||
    { cat "$WORK/out"; die "validate commons_open.json output"; }
"$POLIS" run "$COMMONS" --steps 50 --quiet >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "polis run $COMMONS"; }

step "the installed Lua test runner checks a script's expectations"
[ -x "$PREFIX/bin/polis-lua-test" ] || die "bin/polis-lua-test not installed"
cat >"$WORK/hello_test.lua" <<'LUA'
-- scenario: {"agents": 2, "max_steps": 2}
-- dump: rewards done
polis.log("hello from the script")
-- expect: hello from the script
-- expect: t0 rewards: 0 0
-- expect: t0 done: term 0 0 trunc 0 0
-- expect: t1 rewards: 0 0
-- expect: t1 done: term 0 0 trunc 0 0
-- expect: t2 rewards: 0 0
-- expect: t2 done: term 0 0 trunc 1 1
LUA
"$PREFIX/bin/polis-lua-test" "$WORK/hello_test.lua" >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "polis-lua-test hello_test.lua"; }
grep -qxF "$WORK/hello_test.lua: ok" "$WORK/out" || { cat "$WORK/out"; die "polis-lua-test output"; }
sed 's/t1 rewards: 0 0/t1 rewards: 0 1/' "$WORK/hello_test.lua" >"$WORK/wrong_test.lua"
"$PREFIX/bin/polis-lua-test" "$WORK/wrong_test.lua" >"$WORK/out" 2>&1 && die "polis-lua-test passed a wrong expectation"
grep -qF "expected: t1 rewards: 0 1" "$WORK/out" || { cat "$WORK/out"; die "polis-lua-test failure output"; }

step "find_package(polis): build the out-of-tree plugin example"
"$CMAKE" -S "$SRC/examples/out_of_tree_plugin" -B "$WORK/plugin" -G "$GEN" \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    >"$WORK/plugin.log" || { cat "$WORK/plugin.log"; die "configure examples/out_of_tree_plugin"; }
# No build type chosen: polis_add_plugin still compiles with -O2 -Wall -Wextra.
CMD=$(grep -F '"command"' "$WORK/plugin/compile_commands.json" | grep -F hot_potato.c || true)
for flag in -O2 -Wall -Wextra; do
    case " $CMD " in *" $flag "*) ;; *) die "the out-of-tree plugin is not compiled with $flag: $CMD" ;; esac
done
"$CMAKE" --build "$WORK/plugin" >>"$WORK/plugin.log" 2>&1 ||
    { cat "$WORK/plugin.log"; die "build examples/out_of_tree_plugin"; }
[ -f "$WORK/plugin/hot_potato.so" ] || die "no hot_potato.so (the plugin must have no lib prefix)"
if nm -D --defined-only "$WORK/plugin/hot_potato.so" | grep -v ' polis_plugin_entry$' | grep -q ' T '; then
    nm -D --defined-only "$WORK/plugin/hot_potato.so"
    die "hot_potato.so exports more than polis_plugin_entry"
fi

step "installed polis runs the out-of-tree plugin"
POTATO=$SRC/examples/out_of_tree_plugin/hot_potato.json
"$POLIS" run "$POTATO" --plugin-path "$WORK/plugin" --json >"$WORK/out" 2>&1 ||
    { cat "$WORK/out"; die "polis run hot_potato.json"; }
cat "$WORK/out"
grep -qF '"steps":15,"done":true' "$WORK/out" || die "the potato did not explode after 15 steps"
grep -qF '"potato.exploded":1' "$WORK/out" || die "no potato.exploded event"
# Installing the plugin puts it where the engine looks by default.
"$CMAKE" --install "$WORK/plugin" >>"$WORK/plugin.log" || die "install the plugin"
[ -f "$LIBDIR/polis/plugins/hot_potato.so" ] || die "hot_potato.so not installed into the plugin dir"
"$POLIS" validate "$POTATO" >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "validate without --plugin-path"; }
grep -qxF "ok: hot_potato: 3 agents, 2 actions, 16 obs bytes" "$WORK/out" || die "validate hot_potato output"

step "the C game template: a copy of examples/c_game, renamed as its README says, built out of tree, with CMake and with make"
cp -r "$SRC/examples/c_game" "$WORK/mygame"
RENAME=$(sed -n '/^rm -rf build && grep -rlI/,/^mv orchard.json/p' "$SRC/examples/c_game/README.md")
[ -n "$RENAME" ] || die "examples/c_game/README.md: no rename commands found"
(cd "$WORK/mygame" && sh -c "$RENAME") || die "the README's rename: $RENAME"
! grep -rli orchard "$WORK/mygame" || die "the README's rename left the word orchard in the files above"
"$CMAKE" -S "$WORK/mygame" -B "$WORK/mygame/build" -G "$GEN" -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >"$WORK/mygame.log" ||
    { cat "$WORK/mygame.log"; die "configure the template copy"; }
"$CMAKE" --build "$WORK/mygame/build" >>"$WORK/mygame.log" 2>&1 ||
    { cat "$WORK/mygame.log"; die "build the template copy"; }
(cd "$WORK/mygame/build" && ctest --output-on-failure) >"$WORK/out" 2>&1 ||
    { cat "$WORK/out"; die "the template copy's tests (CMake)"; }
grep -qF "100% tests passed" "$WORK/out" || { cat "$WORK/out"; die "the template copy's tests"; }
(cd "$WORK/mygame" && make clean >/dev/null && env PATH="$PREFIX/bin:$PATH" \
    PKG_CONFIG_PATH="$LIBDIR/pkgconfig" CC="$CC" CFLAGS="-O2 -Wall -Wextra -Werror" make test) \
    >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "the template copy with make and pkg-config"; }
grep -qF "mygame core: all checks passed" "$WORK/out" || { cat "$WORK/out"; die "make test output"; }
grep -qF '"steps":100,"done":true' "$WORK/out" || { cat "$WORK/out"; die "make test: no episode"; }

for variant in shared static; do
    step "find_package(polis): examples/embed_c linked with the $variant library"
    static=OFF
    [ "$variant" = static ] && static=ON
    "$CMAKE" -S "$SRC/examples/embed_c" -B "$WORK/embed_$variant" -G "$GEN" \
        -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$PREFIX" -DPOLIS_EMBED_STATIC=$static \
        >"$WORK/embed.log" || { cat "$WORK/embed.log"; die "configure examples/embed_c"; }
    "$CMAKE" --build "$WORK/embed_$variant" >>"$WORK/embed.log" 2>&1 ||
        { cat "$WORK/embed.log"; die "build examples/embed_c ($variant)"; }
    "$WORK/embed_$variant/embed_c" "$GATHER" 2000 >"$WORK/out" 2>&1 ||
        { cat "$WORK/out"; die "embed_c ($variant) failed"; }
    cat "$WORK/out"
    grep -qF "2000 steps, 10 finished episodes" "$WORK/out" || die "embed_c ($variant) output"
    # record_c: the recording and pixels libraries, found through the same package.
    "$WORK/embed_$variant/record_c" "$GATHER" "$WORK/rec_$variant.jsonl.gz" "$WORK/frame_$variant.ppm" \
        >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "record_c ($variant) failed"; }
    cat "$WORK/out"
    grep -qxF "recorded 200 steps of gather to $WORK/rec_$variant.jsonl.gz" "$WORK/out" ||
        die "record_c ($variant) output"
    grep -qxF "frame 96x96 to $WORK/frame_$variant.ppm" "$WORK/out" || die "record_c ($variant) frame"
    "$POLIS" replay "$WORK/rec_$variant.jsonl.gz" --verify >"$WORK/out" 2>&1 ||
        { cat "$WORK/out"; die "polis replay --verify of record_c's recording ($variant)"; }
done
[ "$(zcat "$WORK/rec_shared.jsonl.gz")" = "$(zcat "$WORK/rec_static.jsonl.gz")" ] ||
    die "record_c recorded different episodes shared and static"
cmp "$WORK/frame_shared.ppm" "$WORK/frame_static.ppm" || die "record_c drew different frames"
ldd "$WORK/embed_shared/record_c" | grep -q "$LIBDIR/libpolis-record.so" ||
    die "the shared record_c does not use the installed libpolis-record.so"
ldd "$WORK/embed_static/record_c" | grep -q libpolis && die "the static record_c links a polis .so"
if nm -D --defined-only "$WORK/embed_static/embed_c" 2>/dev/null | grep -q polis_env_create; then
    die "the static embed_c exports engine symbols"
fi
ldd "$WORK/embed_static/embed_c" | grep -q libpolis && die "the static embed_c links libpolis.so"
ldd "$WORK/embed_shared/embed_c" | grep -q "$LIBDIR/libpolis.so" ||
    die "the shared embed_c does not use the installed libpolis.so"

step "pkg-config: compile examples/embed_c with \`pkg-config --cflags --libs polis\`"
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
pkg-config --exists --print-errors polis || die "pkg-config cannot find polis"
[ "$(pkg-config --modversion polis)" = "$VERSION" ] || die "pkg-config --modversion polis"
FLAGS=$(pkg-config --cflags --libs polis)
echo "pkg-config --cflags --libs polis: $FLAGS"
# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -o "$WORK/embed_pc" "$SRC/examples/embed_c/main.c" $FLAGS ||
    die "compile with pkg-config flags"
"$WORK/embed_pc" "$GATHER" 500 >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "embed_pc failed"; }
grep -qF "500 steps" "$WORK/out" || die "embed_pc output"
STATIC_LIBS=$(pkg-config --static --libs polis)
for lib in -llua5.4 -lcjson -lffi -ldl -lm; do
    case " $STATIC_LIBS " in *" $lib "*) ;; *) die "pkg-config --static --libs polis lacks $lib: $STATIC_LIBS" ;; esac
done
case " $STATIC_LIBS " in *" -lz "*) die "pkg-config --static --libs polis asks for zlib: $STATIC_LIBS" ;; esac
FLAGS=$(pkg-config --cflags --libs polis-record polis-pixels)
echo "pkg-config --cflags --libs polis-record polis-pixels: $FLAGS"
# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -o "$WORK/record_pc" "$SRC/examples/embed_c/record_c.c" $FLAGS ||
    die "compile record_c with pkg-config flags"
"$WORK/record_pc" "$GATHER" "$WORK/rec_pc.jsonl" "$WORK/frame_pc.ppm" >"$WORK/out" 2>&1 ||
    { cat "$WORK/out"; die "record_pc failed"; }
cmp "$WORK/frame_pc.ppm" "$WORK/frame_shared.ppm" || die "record_pc drew another frame"
STATIC_LIBS=$(pkg-config --static --libs polis-record)
for lib in -lpolis-record -lpolis -lcjson; do
    case " $STATIC_LIBS " in *" $lib "*) ;; *) die "pkg-config --static --libs polis-record lacks $lib: $STATIC_LIBS" ;; esac
done
case " $STATIC_LIBS " in *" -lz "* | *" -lisal "*) ;; *) die "pkg-config --static --libs polis-record lacks its deflater (-lz or -lisal): $STATIC_LIBS" ;; esac

step "pip install ./sdk/python: the Python SDK finds the installed libpolis by itself"
# In a venv that sees Debian's packages (numpy), from a copy of sdk/python. No
# LD_LIBRARY_PATH, no POLIS_LIBRARY: the SDK finds the library through pkg-config, then
# through the polis program on PATH.
# Debian's python3 (the one the Python tests use), else python3 from PATH.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if "$PY" -m pip --version >/dev/null 2>&1 && "$PY" -c "import setuptools, wheel" 2>/dev/null; then
    cp -R "$SRC/sdk/python" "$WORK/sdk"
    rm -rf "$WORK/sdk/build" "$WORK/sdk"/*.egg-info
    "$PY" -m venv --system-site-packages --without-pip "$WORK/venv" || die "$PY -m venv"
    "$WORK/venv/bin/python" -m pip install --no-build-isolation --no-deps --no-index \
        "$WORK/sdk" >"$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log"; die "pip install sdk/python"; }
    # The SDK's build backend (sdk/python/_build_backend.py) builds in a temporary copy:
    # nothing is left in the directory installed from.
    for left in "$WORK/sdk/build" "$WORK/sdk"/*.egg-info; do
        [ ! -e "$left" ] || die "pip install left $left in the source directory"
    done
    cat >"$WORK/sdk_check.py" <<'PY'
import os, sys
import polis
want_lib, version = sys.argv[1], sys.argv[2]
assert "site-packages" in polis.__file__, polis.__file__
assert os.path.isfile(os.path.join(os.path.dirname(polis.__file__), "py.typed"))
# every subpackage is installed, with its data files
import polis.llm, polis.rl
assert polis.rl.load_policy and "site-packages" in polis.rl.__file__, polis.rl.__file__
llm_dir = os.path.dirname(polis.llm.__file__)
assert os.path.isfile(os.path.join(llm_dir, "prompts", "llmc", "social.txt")), llm_dir
assert polis.__version__ == version == polis.library_version(), polis.__version__
lib = polis.load_library().path
assert os.path.realpath(lib).startswith(os.path.realpath(want_lib)), lib
env = polis.parallel_env("gather", max_steps=20)
obs, infos = env.reset(seed=1)
while env.agents:
    obs, rew, term, trunc, infos = env.step({})
# Recordings and frames come from libpolis-record and libpolis-pixels beside libpolis.
rec = os.path.join(os.getcwd(), "sdk_rec.jsonl")
e = polis.Env(sys.argv[3], record=rec)
e.reset(1)
e.step([0] * e.n_agents)
frame = e.render_rgb(None, 8)
e.close()
assert frame.shape == (96, 96, 3), frame.shape
assert open(rec).readline().startswith('{"t":"header"'), rec
print("sdk ok:", lib, infos["agent_0"]["episode"])
PY
    for how in pkg-config PATH; do
        if [ "$how" = pkg-config ]; then
            p=$PATH pc=$LIBDIR/pkgconfig
        else
            p=$PREFIX/bin:$PATH pc=$WORK
        fi
        (cd "$WORK" && env -u LD_LIBRARY_PATH -u POLIS_LIBRARY -u PYTHONPATH PATH="$p" \
            PKG_CONFIG_PATH="$pc" "$WORK/venv/bin/python" "$WORK/sdk_check.py" "$LIBDIR" \
            "$VERSION" "$GATHER") >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "the installed SDK ($how)"; }
        cat "$WORK/out"
    done
else
    echo "skipped: $PY lacks pip, setuptools or wheel (Debian: python3-pip)"
fi

step "an installed polis does not search the build tree it was built in for plugins"
# The library was compiled in $WORK/build; put a plugin back where that tree kept them.
mkdir -p "$WORK/build/plugins"
cp "$LIBDIR/polis/plugins/gather.so" "$WORK/build/plugins/planted.so"
printf '{"agents": 1, "plugins": [{"name": "planted"}]}\n' >"$WORK/planted.json"
"$POLIS" validate "$WORK/planted.json" >"$WORK/out" 2>&1 && { cat "$WORK/out"; die "the installed polis loaded planted.so from the build tree"; }
grep -qF 'cannot find plugin "planted"' "$WORK/out" || { cat "$WORK/out"; die "planted.json: no 'cannot find plugin'"; }
grep -qF "$LIBDIR/polis/plugins/planted.so" "$WORK/out" || { cat "$WORK/out"; die "planted.json: the install dir was not tried"; }
if grep -qF "$WORK/build/plugins" "$WORK/out" || grep -qF "$(cd "$WORK/build" && pwd -P)/plugins" "$WORK/out"; then
    cat "$WORK/out"
    die "the installed polis searched the build tree"
fi
rm -rf "$WORK/build"

step "a relocated install finds its own plugins"
mv "$PREFIX" "$WORK/moved"
MOVED_LIBDIR=$WORK/moved${LIBDIR#"$PREFIX"}
"$WORK/moved/bin/polis" describe "$SRC/rulesets/gather/gather.json" --json >"$WORK/out" ||
    die "relocated polis describe"
grep -qF "\"$MOVED_LIBDIR/polis/plugins/gather.so\"" "$WORK/out" ||
    { grep -F '"path"' "$WORK/out"; die "relocated polis did not load its own gather.so"; }

# ... and its own Lua modules (polis.require names the file it looked for).
printf 'polis.require("no_such_module")\n' >"$WORK/req.lua"
printf '{"agents": 1, "scripts": ["req.lua"]}\n' >"$WORK/req.json"
"$WORK/moved/bin/polis" validate "$WORK/req.json" >"$WORK/out" 2>&1 && die "validate req.json succeeded"
grep -qF "looked for $WORK/moved/share/polis/lua/polis/no_such_module.lua" "$WORK/out" ||
    { cat "$WORK/out"; die "relocated polis did not look for Lua modules in its own share/"; }
"$WORK/moved/bin/polis" run "$WORK/moved/share/polis/rulesets/commons/commons_open.json" --steps 20 \
    --quiet >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "relocated polis run commons_open.json"; }

PKG_CONFIG_PATH="$MOVED_LIBDIR/pkgconfig" pkg-config --cflags polis | grep -qF -- "-I$WORK/moved/" ||
    die "pkg-config of the relocated install: $(PKG_CONFIG_PATH="$MOVED_LIBDIR/pkgconfig" pkg-config --cflags polis)"

step "the relocated polis view serves its own installed viewer"
for f in index.html viewer.js recording.js draw.js font.js viewer.css; do
    [ -f "$WORK/moved/share/polis/viewer/$f" ] || die "viewer/$f not installed"
done
printf '{"t":"header"}\n' >"$WORK/rec.jsonl"
if pkg-config --exists libwebsockets; then
    "$WORK/moved/bin/polis" view "$WORK/rec.jsonl" >"$WORK/view.out" 2>"$WORK/view.err" &
    view_pid=$!
    i=0
    while [ ! -s "$WORK/view.out" ] && [ $i -lt 100 ] && kill -0 $view_pid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    kill $view_pid 2>/dev/null || true
    wait $view_pid || true
    grep -q '^http://127\.0\.0\.1:[0-9]*/?file=/recording/rec\.jsonl$' "$WORK/view.out" ||
        { cat "$WORK/view.out" "$WORK/view.err"; die "polis view printed no URL"; }
    grep -qF "the viewer in $(cd "$WORK/moved/share/polis/viewer" && pwd -P)" "$WORK/view.err" ||
        { cat "$WORK/view.err"; die "polis view did not serve the installed viewer"; }
else
    "$WORK/moved/bin/polis" view "$WORK/rec.jsonl" 2>"$WORK/view.err" && die "polis view without libwebsockets"
    grep -qF "built without libwebsockets" "$WORK/view.err" || { cat "$WORK/view.err"; die "polis view message"; }
fi

printf '\ninstall test: all checks passed\n'
