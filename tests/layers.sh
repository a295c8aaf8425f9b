#!/usr/bin/env bash
# tests/layers.sh [ROOT] — the layer check of docs/architecture.md: reads every #include of
# the engine, the public headers, the plugins and the rulesets, resolves it as the build does
# (the including file's folder, then include/, then engine/; anything else is a system or
# third-party header) and fails, naming file:line and the rule, when one crosses a layer:
#
#   include/polis/*.h        only public headers
#   engine/core/             core and public headers (never a module's)
#   engine/modules.c         core/module.h and public headers
#   engine/<module>/         its own folder, core/env.h, core/registry.h, core/module.h,
#                            public headers, and the internal headers of the modules
#                            MODULE_DEPS allows below (the table of docs/architecture.md)
#   engine/record, pixels    their own folder and public headers: clients of the public API
#   engine/cli               the same, and inside it the program's own layers, CLI_MAY below
#                            (engine/cli/README.md); includes resolve in engine/cli first
#   plugins/, rulesets/      nothing under engine/: the plugin ABI (include/polis) only
#   no header directly in engine/ or include/ (it would shadow a system header: <lua.h>)
#
# ROOT (default: this checkout) is where to look; tests/layers_test.sh runs it on small trees
# with one bad include each. In a checkout (ROOT/CMakeLists.txt exists) every folder the
# tables name must hold files, so that a moved folder cannot pass unread. Exit 0 when clean,
# 1 with one line per violation.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

MODULES="lua ffi scene views policy vec visibility vary"
# A module may include the internal headers of these modules (docs/architecture.md, "What may
# include what"): the Lua host calls plugin exports (polis.call); handler replacement
# installs scripts' functions and replaces policies by name.
declare -A MODULE_DEPS=(
    [lua]="ffi"
    [ffi]="lua policy"
    [scene]=""
    [views]=""
    [policy]=""
    [vec]=""
    [visibility]=""
    [vary]=""
)

# The polis program's layers (engine/cli/README.md): what the files of each folder (and main.c)
# may include; polis/ stands for the public headers. util/ uses nothing of the program's;
# session/ and transport/ use util/ and not each other; transport/ knows nothing of envs.
CLI_LAYERS="cmd/ session/ transport/ util/ main.c"
declare -A CLI_MAY=(
    [util/]="util/ polis/"
    [session/]="session/ util/ polis/"
    [transport/]="transport/ util/"
    [cmd/]="cmd/ session/ transport/ util/ polis/"
    [main.c]="cmd/ polis/"
)

is_module() {
    case " $MODULES " in *" $1 "*) return 0 ;; esac
    return 1
}

# The layer of a path relative to ROOT: public, core, modules-table, module:<m>, client:<d>,
# cli:<folder/ or main.c> (cli: for a file outside the program's layers), plugin, or other.
layer_of() {
    case $1 in
    include/polis/*) echo public ;;
    engine/core/*) echo core ;;
    engine/modules.c) echo modules-table ;;
    engine/cli/*)
        local p=${1#engine/cli/}
        case $p in */*) p=${p%%/*}/ ;; esac
        if [ -n "${CLI_MAY[$p]+set}" ]; then
            echo "cli:$p"
        else
            echo "cli:"
        fi
        ;;
    engine/*/*)
        local d=${1#engine/}
        d=${d%%/*}
        if is_module "$d"; then
            echo "module:$d"
        else
            echo "client:$d"
        fi
        ;;
    plugins/* | rulesets/*) echo plugin ;;
    *) echo other ;;
    esac
}

# Resolves an include the way the build does (the program's own include root, engine/cli,
# comes first for its files); prints the path relative to ROOT, or nothing.
resolve() {
    local file=$1 name=$2 quoted=$3 dir cand
    dir=${file%/*}
    if [ "$quoted" = 1 ] && [ -f "$dir/$name" ]; then
        cand=$dir/$name
    elif [ "${file#engine/cli/}" != "$file" ] && [ -f "engine/cli/$name" ]; then
        cand=engine/cli/$name
    elif [ -f "include/$name" ]; then
        cand=include/$name
    elif [ -f "engine/$name" ]; then
        cand=engine/$name
    else
        return
    fi
    case $cand in
    */../* | */./*) realpath -m --relative-to=. "$cand" ;; # normalise a/b/../c
    *) printf '%s\n' "$cand" ;;
    esac
}

INCLUDE_RE='^[[:space:]]*#[[:space:]]*include[[:space:]]*(["<])([^">]*)[">]'
bad=0
violation() {
    printf '%s:%s: includes %s: %s\n' "$1" "$2" "$3" "$4"
    bad=1
}

# Headers live in folders (engine/<folder>/, include/polis/): one at the top of engine/ or
# include/ would be found for #include "lua.h" before the system's <lua.h>.
for h in engine/*.h include/*.h; do
    [ -f "$h" ] || continue
    printf '%s: a header at the top of %s would shadow a system header of that name: put it in a folder\n' "$h" "${h%%/*}/"
    bad=1
done

files=$(find engine include plugins rulesets -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | sort)
if [ -z "$files" ]; then
    echo "tests/layers.sh: no C file under $ROOT/engine, include, plugins or rulesets"
    exit 2
fi
for file in $files; do
    from=$(layer_of "$file")
    [ "$from" = other ] && continue
    if [ "$from" = cli: ]; then
        printf '%s: a file outside the layers of the program (engine/cli/README.md: %s)\n' "$file" "$CLI_LAYERS"
        bad=1
    fi
    while IFS=: read -r line text; do
        # #include "x" or <x>
        [[ $text =~ $INCLUDE_RE ]] || continue
        quoted=0
        [ "${BASH_REMATCH[1]}" = '"' ] && quoted=1
        name=${BASH_REMATCH[2]}
        target=$(resolve "$file" "$name" "$quoted")
        [ -n "$target" ] || continue # a system or third-party header
        to=$(layer_of "$target")
        shown="$name ($target)"
        case $from in
        public)
            [ "$to" = public ] ||
                violation "$file" "$line" "$shown" "public headers include only public headers (include/polis)"
            ;;
        core)
            case $to in public | core) ;; *)
                violation "$file" "$line" "$shown" "the kernel (engine/core) includes only core and public headers: modules plug in through engine/modules.c" ;;
            esac
            ;;
        modules-table)
            case $to in public) ;; core)
                [ "$target" = engine/core/module.h ] ||
                    violation "$file" "$line" "$shown" "engine/modules.c includes only core/module.h and public headers" ;;
            *)
                violation "$file" "$line" "$shown" "engine/modules.c includes only core/module.h and public headers (it declares the modules' descriptors itself)" ;;
            esac
            ;;
        module:*)
            m=${from#module:}
            case $to in
            public) ;;
            core)
                case $target in
                engine/core/env.h | engine/core/registry.h | engine/core/module.h) ;;
                *) violation "$file" "$line" "$shown" "a module (engine/$m) includes core/env.h, core/registry.h and core/module.h, not the kernel's own headers" ;;
                esac
                ;;
            module:*)
                t=${to#module:}
                if [ "$t" != "$m" ]; then
                    case " ${MODULE_DEPS[$m]} " in
                    *" $t "*)
                        [ "$target" = "engine/$t/internal.h" ] ||
                            violation "$file" "$line" "$shown" "engine/$m may use engine/$t only through engine/$t/internal.h"
                        ;;
                    *) violation "$file" "$line" "$shown" "engine/$m may not include engine/$t (allowed: ${MODULE_DEPS[$m]:-no other module}; docs/architecture.md)" ;;
                    esac
                fi
                ;;
            *) violation "$file" "$line" "$shown" "a module (engine/$m) includes its own folder, core/env.h, core/registry.h, core/module.h and public headers" ;;
            esac
            ;;
        cli:*)
            f=${from#cli:}
            case $to in
            public) t=polis/ ;;
            cli:?*) t=${to#cli:} ;;
            cli:) continue ;; # a file outside the layers: named as such
            *)
                violation "$file" "$line" "$shown" "engine/cli is built on the public API only: its own folder and include/polis"
                continue
                ;;
            esac
            [ -n "$f" ] || continue # the file itself was named above
            case " ${CLI_MAY[$f]} " in *" $t "*) ;; *)
                violation "$file" "$line" "$shown" "engine/cli/$f may include ${CLI_MAY[$f]} (engine/cli/README.md)" ;;
            esac
            ;;
        client:*)
            d=${from#client:}
            case $to in
            public) ;;
            "client:$d") ;;
            *) violation "$file" "$line" "$shown" "engine/$d is built on the public API only: its own folder and include/polis" ;;
            esac
            ;;
        plugin)
            case $target in engine/*)
                violation "$file" "$line" "$shown" "plugins and rulesets use the plugin ABI only (include/polis), nothing under engine/" ;;
            esac
            ;;
        esac
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file")
done

# In a checkout, every folder the tables name holds files: a folder moved or renamed without
# its row would otherwise be checked by no rule.
if [ -f CMakeLists.txt ]; then
    for d in include/polis/ engine/core/ $(printf 'engine/%s/ ' $MODULES) engine/record/ \
        engine/pixels/ $(printf 'engine/cli/%s ' $CLI_LAYERS); do
        case $'\n'"$files" in *$'\n'"$d"*) ;; *)
            printf '%s: no C file there: the tables of tests/layers.sh name a folder that moved\n' "$d"
            bad=1
            ;;
        esac
    done
fi
exit $bad
